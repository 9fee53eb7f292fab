import { contentText } from "../../src/messages";
import type { Message } from "../../src/messages";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../../src/models";
import { createAgent } from "../../src/runtime";
import type { Agent, AgentMiddleware, StreamEvent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import type { ThreadState } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";
import type { ToolDefinition } from "../../src/tools";
import { createDurableContextMiddleware } from "../../src/middlewares/durable-context";
import { createSubagentLimitMiddleware } from "../../src/middlewares/subagent-limit";
import { createChildAgentFactory, createTaskTool, SubagentAdmission, SubagentExecutor, SubagentRegistry } from "../../src/subagents";
import type { ChildAgentSpec, SubagentsSection } from "../../src/subagents";
import type { SandboxProvider } from "../../src/sandbox";

/** The task text a child received (its last non-hidden human message). */
export function taskText(request: ModelRequest): string {
  const humans = request.messages.filter((m) => m.type === "human" && m.additional_kwargs?.hide_from_ui !== true);
  return humans.length ? contentText(humans[humans.length - 1].content) : "";
}

/** How many AI turns the child already made in this request. */
export function turnOf(request: ModelRequest): number {
  return request.messages.filter((m) => m.type === "ai").length;
}

/** Wraps a model and measures how many of its calls overlap in time. */
export class ConcurrencyProbe implements ChatModel {
  readonly provider = "probe";
  readonly modelName: string;
  active = 0;
  peak = 0;
  calls = 0;
  constructor(private readonly inner: ChatModel) {
    this.modelName = inner.modelName;
  }
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.calls++;
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    try {
      yield* this.inner.stream(request);
    } finally {
      this.active--;
    }
  }
}

/** A child model whose reply is a function of (task text, turn). */
export function childModel(reply: (task: string, turn: number, request: ModelRequest) => ScriptStep, modelName = "child-model"): ScriptedModel {
  return new ScriptedModel([(req) => reply(taskText(req), turnOf(req), req)], { onExhausted: "repeat-last", modelName });
}

/** A plain tool the children may call. */
export { tool } from "../../src/tools";

/** Options of {@link leadHarness}. */
export interface LeadHarnessOptions {
  lead: ScriptStep[];
  child: ChatModel;
  subagents?: SubagentsSection;
  bashAllowed?: boolean;
  parentTools?: ToolDefinition[];
  maxConcurrent?: number;
  maxTotal?: number;
  stopGraceMs?: number;
  admission?: SubagentAdmission;
  sandboxProvider?: SandboxProvider;
  childMiddleware?(spec: ChildAgentSpec): AgentMiddleware[];
  extraLeadMiddleware?: AgentMiddleware[];
}

/** A lead agent with the task tool, DurableContext and SubagentLimit over a child model. */
export function leadHarness(o: LeadHarnessOptions): { agent: Agent<ThreadState>; leadModel: ScriptedModel; specs: ChildAgentSpec[] } {
  const leadModel = new ScriptedModel(o.lead, { modelName: "lead-model" });
  const registry = new SubagentRegistry({ config: o.subagents, bashAllowed: o.bashAllowed ?? false });
  const specs: ChildAgentSpec[] = [];
  const factory = createChildAgentFactory({ resolveModel: () => o.child, middleware: o.childMiddleware });
  const parentTools = o.parentTools ?? [];
  const task = createTaskTool({
    registry,
    parentTools: () => [...parentTools, task],
    parentModelName: "lead-model",
    createChildAgent: (spec) => {
      specs.push(spec);
      return factory(spec);
    },
    executor: new SubagentExecutor({ admission: o.admission ?? new SubagentAdmission(8), stopGraceMs: o.stopGraceMs }),
    sandboxProvider: o.sandboxProvider,
  });
  const agent = createAgent<ThreadState>({
    model: leadModel,
    tools: [...parentTools, task],
    middleware: [
      ...(o.extraLeadMiddleware ?? []),
      createDurableContextMiddleware(),
      createSubagentLimitMiddleware({ max_concurrent: o.maxConcurrent ?? 3, max_total: o.maxTotal ?? 6 }),
    ] as AgentMiddleware<ThreadState>[],
    stateSchema: threadStateSchema,
    name: "lead_agent",
  });
  return { agent, leadModel, specs };
}

/** Drain a stream, collecting its events. */
export async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

/** Custom events of the root namespace with a given type prefix. */
export function customEvents(events: StreamEvent[], prefix = "task_"): Array<Record<string, unknown>> {
  return events
    .filter((e) => e.mode === "custom" && e.ns.length === 0)
    .map((e) => e.data as Record<string, unknown>)
    .filter((d) => typeof d.type === "string" && (d.type as string).startsWith(prefix));
}

/** Tool messages of a state. */
export function toolMessages(messages: Message[], name = "task") {
  return messages.filter((m) => m.type === "tool" && m.name === name);
}

/** A lead step calling `task` several times. */
export function delegate(...tasks: Array<{ id: string; prompt: string; type?: string; description?: string; extra?: Record<string, unknown> }>): ScriptStep {
  return {
    toolCalls: tasks.map((t) => ({
      id: t.id,
      name: "task",
      args: { description: t.description ?? `do ${t.id}`, prompt: t.prompt, subagent_type: t.type ?? "general-purpose", ...(t.extra ?? {}) },
    })),
  };
}
