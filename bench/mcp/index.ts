/**
 * MCP overhead: one tool call over a pooled stdio session (official SDK
 * client ↔ a real stdio server) against the same work done by an in-process
 * tool, and the time to load 10 stdio servers in parallel against loading one.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { McpPool } from "../../packages/harness/src/mcp";
import { threadDirs } from "../../packages/harness/src/sandbox";
import { tool } from "../../packages/harness/src/tools";
import type { ToolDefinition, ToolRuntime } from "../../packages/harness/src/tools";
import { envInt, heading, median, percentile, printResultLine, report, round, timeSamples } from "../lib";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CRASHING = path.join(ROOT, "packages/harness/test/fixtures/mcp/crashing-server.mjs");
const HANGING = path.join(ROOT, "packages/harness/test/fixtures/mcp/hanging-server.mjs");
const CALLS = envInt("BENCH_MCP_CALLS", 300);
const LOADS = envInt("BENCH_MCP_LOADS", 3);
const SERVERS = 10;

const runtime = {
  context: { thread_id: "bench", run_id: "r", user_id: "bench" },
  signal: new AbortController().signal,
  toolCallId: "c",
} as unknown as ToolRuntime;

function poolFor(dir: string, servers: number, hung = false): McpPool {
  const file = path.join(dir, `extensions_config.${servers}${hung ? ".hung" : ""}.json`);
  const mcpServers: Record<string, unknown> = {};
  for (let i = 0; i < servers; i++) {
    mcpServers[`s${i}`] = hung ? { type: "stdio", command: process.execPath, args: [HANGING], session_init_timeout: 1 } : { type: "stdio", command: process.execPath, args: [CRASHING] };
  }
  fs.writeFileSync(file, JSON.stringify({ mcpServers }));
  return new McpPool({ extensionsConfig: () => ({ path: file }), threadDirs: (u, t) => threadDirs(dir, t, u), launch: { dataDir: dir }, logger: { warn: () => undefined } });
}

async function loadMs(dir: string, servers: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const pool = poolFor(dir, servers);
    const t0 = performance.now();
    const tools = await pool.getTools();
    out.push(performance.now() - t0);
    if (tools.length !== servers * 2) throw new Error(`expected ${servers * 2} tools, got ${tools.length}`);
    await pool.close();
  }
  return out;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-mcp-"));
  try {
    heading(`tool-call round trip (${CALLS} calls each, after 20 warm-ups)`);
    const direct: ToolDefinition = tool({ name: "echo", description: "echo", schema: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });
    const directSamples = await timeSamples(async (i) => {
      const r = await direct.execute({ text: `m${i}` }, runtime);
      if (r !== `echo: m${i}`) throw new Error("direct tool returned the wrong result");
    }, { warmup: 20, iterations: CALLS });
    const pool = poolFor(dir, 1);
    const tools = await pool.getTools();
    const echo = tools.find((t) => t.name === "s0_echo")!;
    const mcpSamples = await timeSamples(async (i) => {
      const r = (await echo.execute({ text: `m${i}` }, runtime)) as { content: unknown };
      if (r.content !== `echo: m${i}`) throw new Error(`MCP tool returned ${JSON.stringify(r)}`);
    }, { warmup: 20, iterations: CALLS });
    await pool.close();
    const directMs = median(directSamples);
    const mcpMs = median(mcpSamples);
    report("in-process tool (reference)          median / p90", `${round(directMs * 1000, 1)} µs / ${round(percentile(directSamples, 90) * 1000, 1)} µs`);
    report("MCP tool over stdio (pooled session) median / p90", `${round(mcpMs, 3)} ms / ${round(percentile(mcpSamples, 90), 3)} ms`);
    report("overhead of the stdio round trip", `${round(mcpMs - directMs, 3)} ms per call (×${round(mcpMs / directMs, 0)})`);

    heading(`server load (${LOADS} loads each; fixture server = node + official SDK; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores)`);
    const one = median(await loadMs(dir, 1));
    const ten = median(await loadMs(dir, SERVERS));
    report("1 stdio server: spawn + initialize + tools/list", `${round(one, 1)} ms`);
    report(`${SERVERS} stdio servers in parallel`, `${round(ten, 1)} ms`);
    report(`parallel ÷ (${SERVERS} × one) (1.0 = no gain over sequential)`, `${round(ten / (SERVERS * one), 3)}`);
    // Start-up is CPU-bound (each server is a node process loading the SDK), so on 2 busy cores the figure above
    // cannot show the parallelism; servers that hang at start cost no CPU and show it directly.
    const hungPool = poolFor(dir, SERVERS, true);
    const h0 = performance.now();
    const none = await hungPool.getTools();
    const hungMs = performance.now() - h0;
    await hungPool.close();
    if (none.length) throw new Error("hung servers returned tools");
    report(`${SERVERS} servers hanging at start, 1 s timeout each`, `${round(hungMs, 1)} ms (sequential would be ≥ ${SERVERS * 1000} ms)`);
    printResultLine({
      direct_call_ms: round(directMs, 4),
      mcp_stdio_call_ms: round(mcpMs, 3),
      mcp_call_overhead_ms: round(mcpMs - directMs, 3),
      load_1_server_ms: round(one, 1),
      load_10_servers_parallel_ms: round(ten, 1),
      parallel_over_sequential: round(ten / (SERVERS * one), 3),
      load_10_hung_servers_ms: round(hungMs, 1),
      cores: os.cpus().length,
      load_average: round(os.loadavg()[0], 1),
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
