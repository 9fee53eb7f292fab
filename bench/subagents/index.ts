/**
 * Sub-agent delegation: the lead delegates `PER_BATCH` (3) tasks per response
 * in `BATCHES` (2) responses; each sub-agent makes 2 model calls of
 * `CHILD_MS` (1000 ms) with a no-op tool in between; `max_concurrent_subagents`
 * 3. The run is model-bound: wall ≈ lead calls + BATCHES × 2 × CHILD_MS.
 * Prints the ratio to that bound (target ≤ 1.1), the parent's overhead per
 * delegation (from the latency run and from an instant-model run), and the
 * peak RSS per concurrent sub-agent (many threads delegating at once), then
 * one JSON line.
 */
import { z } from "zod";
import { humanMessage } from "../../packages/harness/src/messages";
import type { ChatModel } from "../../packages/harness/src/models";
import {
  createDanglingToolCallMiddleware,
  createDurableContextMiddleware,
  createInputSanitizationMiddleware,
  createLoopDetectionMiddleware,
  createSubagentLimitMiddleware,
  createSystemMessageCoalescingMiddleware,
  createTerminalResponseMiddleware,
  createTokenUsageMiddleware,
  createToolErrorHandlingMiddleware,
} from "../../packages/harness/src/middlewares";
import { createAgent } from "../../packages/harness/src/runtime";
import type { AgentMiddleware } from "../../packages/harness/src/runtime";
import { threadStateSchema } from "../../packages/harness/src/state";
import type { ThreadState } from "../../packages/harness/src/state";
import { createChildAgentFactory, createTaskTool, SubagentAdmission, SubagentExecutor, SubagentRegistry } from "../../packages/harness/src/subagents";
import { tool } from "../../packages/harness/src/tools";
import { envInt, heading, median, printResultLine, report, round } from "../lib";
import { ChildLatencyModel, LeadLatencyModel, NOOP_TOOL } from "./latency-model";

const CHILD_MS = envInt("BENCH_SUBAGENT_CHILD_MS", 1000);
const LEAD_MS = envInt("BENCH_SUBAGENT_LEAD_MS", 100);
const BATCHES = 2;
const PER_BATCH = 3;
const INSTANT_RUNS = envInt("BENCH_SUBAGENT_INSTANT_RUNS", 30);
// 20 threads × 3 = 60 concurrent children, inside the admission limit of 64 (nothing queues).
const MEM_THREADS = Math.min(21, envInt("BENCH_SUBAGENT_MEM_THREADS", 20));

const noop = tool({ name: NOOP_TOOL, description: "does nothing", schema: z.object({}), execute: () => "ok" });

/** The chain rows a sub-agent run shares with the lead (no sandbox: the no-op tool needs none). */
function baseChain(): AgentMiddleware[] {
  return [
    createInputSanitizationMiddleware(),
    createDanglingToolCallMiddleware(),
    createToolErrorHandlingMiddleware(),
    createTokenUsageMiddleware(),
    createSystemMessageCoalescingMiddleware(),
    createLoopDetectionMiddleware(),
    createTerminalResponseMiddleware(),
  ];
}

function leadAgent(lead: ChatModel, child: ChatModel, admission: SubagentAdmission) {
  const registry = new SubagentRegistry({ bashAllowed: false });
  const task = createTaskTool({
    registry,
    parentTools: () => [noop, task],
    parentModelName: "lead",
    createChildAgent: createChildAgentFactory({ resolveModel: () => child, middleware: () => baseChain() }),
    executor: new SubagentExecutor({ admission }),
  });
  return createAgent<ThreadState>({
    model: lead,
    tools: [noop, task],
    middleware: [...baseChain(), createDurableContextMiddleware(), createSubagentLimitMiddleware({ max_concurrent: 3, max_total: 6 })] as AgentMiddleware<ThreadState>[],
    stateSchema: threadStateSchema,
    name: "lead_agent",
  });
}

async function runOnce(leadMs: number, childMs: number, threadId: string, admission: SubagentAdmission): Promise<{ ms: number; childCalls: number }> {
  const child = new ChildLatencyModel(childMs);
  const agent = leadAgent(new LeadLatencyModel(leadMs, BATCHES, PER_BATCH), child, admission);
  const t0 = performance.now();
  const res = await agent.invoke({ messages: [humanMessage("compare six things")] }, { threadId });
  const ms = performance.now() - t0;
  const tasks = res.state.messages.filter((m) => m.type === "tool" && m.name === "task");
  const ok = tasks.filter((m) => m.additional_kwargs?.subagent_status === "completed").length;
  if (res.status !== "success" || ok !== BATCHES * PER_BATCH) throw new Error(`bench run broken: status ${res.status}, ${ok} completed tasks`);
  return { ms, childCalls: child.calls };
}

async function main(): Promise<void> {
  const admission = new SubagentAdmission(64);
  heading(`latency run: ${BATCHES} responses × ${PER_BATCH} sub-agents, 2 calls × ${CHILD_MS} ms each, lead calls ${LEAD_MS} ms`);
  await runOnce(0, 0, "warm", admission); // JIT warm-up
  const bound = (BATCHES + 1) * LEAD_MS + BATCHES * 2 * CHILD_MS;
  const latency = await runOnce(LEAD_MS, CHILD_MS, "latency", admission);
  if (latency.childCalls !== BATCHES * PER_BATCH * 2) throw new Error(`expected ${BATCHES * PER_BATCH * 2} child calls, got ${latency.childCalls}`);
  const ratio = latency.ms / bound;
  const overheadLatency = (latency.ms - bound) / (BATCHES * PER_BATCH);
  report("model-bound time (lead calls + 2 batches × 2 calls)", `${bound} ms`);
  report("wall time", `${round(latency.ms, 1)} ms`);
  report("ratio wall / model-bound (target ≤ 1.1)", `${round(ratio, 4)}`);
  report("parent overhead per delegation (latency run)", `${round(overheadLatency, 2)} ms`);

  // Measured before the instant runs so the heap has not grown yet: RSS never shrinks back.
  heading(`memory: ${MEM_THREADS} threads delegating at once (${MEM_THREADS * PER_BATCH} concurrent sub-agents)`);
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 5);
  await Promise.all(Array.from({ length: MEM_THREADS }, (_, i) => runOnce(LEAD_MS, Math.min(CHILD_MS, 300), `mem-${i}`, admission)));
  clearInterval(sampler);
  const concurrent = MEM_THREADS * PER_BATCH;
  const rssPerChildKb = (peakRss - base.rss) / 1024 / concurrent;
  const heapPerChildKb = (peakHeap - base.heapUsed) / 1024 / concurrent;
  report("rss baseline / peak", `${round(base.rss / 1048576, 1)} MB / ${round(peakRss / 1048576, 1)} MB`);
  report("peak RSS per concurrent sub-agent", `${round(rssPerChildKb, 1)} KB`);
  report("peak JS heap per concurrent sub-agent", `${round(heapPerChildKb, 1)} KB`);

  heading(`instant models: ${INSTANT_RUNS} runs of the same 6 delegations`);
  const instant: number[] = [];
  for (let i = 0; i < INSTANT_RUNS; i++) instant.push((await runOnce(0, 0, `instant-${i}`, admission)).ms);
  const perDelegation = median(instant) / (BATCHES * PER_BATCH);
  report("median run (3 lead calls + 6 sub-agents × 2 calls)", `${round(median(instant), 2)} ms`);
  report("cost per delegation incl. its child run (instant)", `${round(perDelegation, 3)} ms`);

  printResultLine({
    subagents: BATCHES * PER_BATCH,
    child_call_ms: CHILD_MS,
    model_bound_ms: bound,
    wall_ms: round(latency.ms, 1),
    ratio: round(ratio, 4),
    ratio_target: 1.1,
    parent_overhead_per_delegation_ms: round(overheadLatency, 2),
    instant_cost_per_delegation_ms: round(perDelegation, 3),
    concurrent_subagents_mem: concurrent,
    peak_rss_per_subagent_kb: round(rssPerChildKb, 1),
    peak_heap_per_subagent_kb: round(heapPerChildKb, 1),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
