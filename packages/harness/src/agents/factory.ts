import { resolve } from "node:path";
import { ValidationError } from "../errors";
import type { ChatModel } from "../models";
import { createAgent } from "../runtime";
import type { Agent, AgentMiddleware } from "../runtime";
import { createSandboxProvider } from "../sandbox";
import type { SandboxProvider } from "../sandbox";
import type { CheckpointStore, Checkpointer } from "../checkpoints";
import { mergeSchemas, threadStateSchema } from "../state";
import type { StateSchema, ThreadState } from "../state";
import type { ToolDefinition } from "../tools";
import {
  createClarificationMiddleware,
  createDanglingToolCallMiddleware,
  createDurableContextMiddleware,
  createLoopDetectionMiddleware,
  createSandboxMiddleware,
  createSubagentLimitMiddleware,
  createThreadDataMiddleware,
  createTitleMiddleware,
  createTodoMiddleware,
  createTokenBudgetMiddleware,
  createToolErrorHandlingMiddleware,
  createUploadsMiddleware,
  createViewImageMiddleware,
} from "../middlewares";
import { askClarificationTool, createViewImageTool } from "../builtins";
import { placeInChain, SLOT, slotOfName } from "../capabilities/chain-slots";
import type { ChainSlot, SlottedMiddleware } from "../capabilities/chain-slots";
import { buildSystemPrompt } from "./prompt";
import { createChildAgentFactory, createTaskTool, SubagentRegistry } from "../subagents";

/**
 * DeerFlow's `RuntimeFeatures`: `true` enables the built-in middleware, a
 * middleware instance replaces it, `false` disables it. `summarization` and
 * `guardrail` need an instance (they cannot be built without configuration).
 */
export interface RuntimeFeatures {
  sandbox?: boolean | AgentMiddleware;
  memory?: boolean | AgentMiddleware;
  summarization?: false | AgentMiddleware;
  subagent?: boolean | AgentMiddleware;
  vision?: boolean | AgentMiddleware;
  auto_title?: boolean | AgentMiddleware;
  guardrail?: false | AgentMiddleware;
  loop_detection?: boolean | AgentMiddleware;
  token_budget?: boolean | AgentMiddleware;
}

/** An extra middleware, optionally anchored next to a named middleware of the chain. */
export type ExtraMiddleware = AgentMiddleware | { middleware: AgentMiddleware; before?: string; after?: string };

/** Options of {@link createDeerflowAgent}. */
export interface CreateDeerflowAgentOptions {
  systemPrompt?: string;
  /** Full takeover of the chain (cannot be combined with `features` or `extraMiddleware`). */
  middleware?: AgentMiddleware[];
  features?: RuntimeFeatures;
  extraMiddleware?: ExtraMiddleware[];
  planMode?: boolean;
  stateSchema?: StateSchema;
  checkpointer?: CheckpointStore | Checkpointer;
  name?: string;
  /** Runtime home for thread directories (default `DEER_FLOW_HOME` or `.deer-flow`). */
  baseDir?: string;
  /** Sandbox provider used by the sandbox feature (default: auto — bwrap when it works, else local). */
  sandboxProvider?: SandboxProvider;
}

const DEFAULT_FEATURES: Required<Pick<RuntimeFeatures, "sandbox" | "memory" | "subagent" | "vision" | "auto_title" | "loop_detection" | "token_budget">> = {
  sandbox: true,
  memory: false,
  subagent: false,
  vision: false,
  auto_title: false,
  loop_detection: true,
  token_budget: false,
};

function placeExtras(chain: AgentMiddleware[], extras: ExtraMiddleware[]): AgentMiddleware[] {
  const out = [...chain];
  const anchored = new Map<string, string>();
  for (const extra of extras) {
    const spec: { middleware: AgentMiddleware; before?: string; after?: string } =
      "middleware" in extra ? extra : { middleware: extra };
    const anchor = spec.before ? `before:${spec.before}` : spec.after ? `after:${spec.after}` : undefined;
    if (anchor) {
      if (anchored.has(anchor)) {
        throw new ValidationError(`extraMiddleware conflict: '${spec.middleware.name}' and '${anchored.get(anchor)}' both anchor ${anchor}`);
      }
      anchored.set(anchor, spec.middleware.name);
      const target = spec.before ?? spec.after!;
      const at = out.findIndex((m) => m.name === target);
      if (at < 0) throw new ValidationError(`extraMiddleware '${spec.middleware.name}': anchor '${target}' is not in the chain`);
      out.splice(spec.before ? at : at + 1, 0, spec.middleware);
      continue;
    }
    const clar = out.findIndex((m) => m.name === "ClarificationMiddleware");
    if (clar >= 0) out.splice(clar, 0, spec.middleware);
    else out.push(spec.middleware);
  }
  // Clarification always ends the chain.
  const clar = out.findIndex((m) => m.name === "ClarificationMiddleware");
  if (clar >= 0 && clar !== out.length - 1) out.push(...out.splice(clar, 1));
  return out;
}

/**
 * The config-free SDK factory (DeerFlow's `create_deerflow_agent`): a model,
 * your tools and DeerFlow's feature middlewares in their canonical order
 * ThreadData → Uploads → Sandbox → DanglingToolCall → Guardrail →
 * ToolErrorHandling → Summarization → Todo → Title → Memory → ViewImage →
 * SubagentLimit → LoopDetection → TokenBudget → Clarification (always last).
 * Feature-injected tools are deduped by name; your tools win.
 */
export function createDeerflowAgent(model: ChatModel, tools: ToolDefinition[] = [], options: CreateDeerflowAgentOptions = {}): Agent<ThreadState> {
  if (options.middleware && (options.features || options.extraMiddleware)) {
    throw new ValidationError("createDeerflowAgent: `middleware` is a full takeover and cannot be combined with `features` or `extraMiddleware`");
  }
  const f = { ...DEFAULT_FEATURES, ...(options.features ?? {}) };
  if ((options.features?.summarization as unknown) === true) throw new ValidationError("features.summarization needs a middleware instance (createSummarizationMiddleware(...))");
  if ((options.features?.guardrail as unknown) === true) throw new ValidationError("features.guardrail needs a middleware instance (createGuardrailMiddleware({provider}))");
  if (f.memory === true) throw new ValidationError("features.memory: the built-in memory middleware is not available yet; pass a middleware instance");
  const baseDir = resolve(options.baseDir ?? process.env.DEER_FLOW_HOME ?? ".deer-flow");

  const featureTools: ToolDefinition[] = [];
  let registry: SubagentRegistry | undefined;
  let chain: AgentMiddleware[];
  if (options.middleware) {
    chain = [...options.middleware];
  } else {
    // Built-in middlewares go in their typed slot; an instance the caller passed goes where its name belongs.
    const slotted: SlottedMiddleware[] = [];
    const add = (slot: ChainSlot, mw: AgentMiddleware | undefined) => mw && slotted.push({ slot, middleware: mw });
    const given = (mw: AgentMiddleware | undefined | false) => mw && slotted.push({ slot: slotOfName(mw.name), middleware: mw });
    let provider = options.sandboxProvider;
    if (f.sandbox === true) {
      provider ??= createSandboxProvider({}, { baseDir });
      add(SLOT.ThreadData, createThreadDataMiddleware({ base_dir: baseDir }));
      add(SLOT.Uploads, createUploadsMiddleware({ base_dir: baseDir }));
      add(SLOT.Sandbox, createSandboxMiddleware({ provider }));
    } else if (f.sandbox && typeof f.sandbox === "object") {
      given(f.sandbox);
    }
    add(SLOT.DanglingToolCall, createDanglingToolCallMiddleware());
    given(f.guardrail);
    add(SLOT.ToolErrorHandling, createToolErrorHandlingMiddleware());
    given(f.summarization);
    add(SLOT.Todo, options.planMode ? createTodoMiddleware() : undefined);
    if (f.auto_title === true) add(SLOT.Title, createTitleMiddleware());
    else given(typeof f.auto_title === "object" && f.auto_title);
    given(f.memory && typeof f.memory === "object" && f.memory);
    if (f.vision === true) add(SLOT.ViewImage, createViewImageMiddleware({ supportsVision: true }));
    else given(typeof f.vision === "object" && f.vision);
    if (f.vision === true && provider) featureTools.push(createViewImageTool({ provider }));
    if (f.subagent === true) {
      // The built-in task tool: children run on the same model with the sandbox rows and a fresh LoopDetection.
      registry = new SubagentRegistry({ bashAllowed: !!provider && provider.kind !== "local" });
      const childProvider = provider;
      featureTools.push(
        createTaskTool({
          registry,
          parentTools: () => allTools,
          parentModelName: model.modelName,
          createChildAgent: createChildAgentFactory({
            resolveModel: () => model,
            middleware: () => [
              ...(childProvider ? [createThreadDataMiddleware({ base_dir: baseDir }), createSandboxMiddleware({ provider: childProvider })] : []),
              createDanglingToolCallMiddleware(),
              createToolErrorHandlingMiddleware(),
              ...(f.loop_detection === false ? [] : [createLoopDetectionMiddleware()]),
            ],
          }),
          sandboxProvider: childProvider,
        }),
      );
      add(SLOT.DurableContext, createDurableContextMiddleware());
      add(SLOT.SubagentLimit, createSubagentLimitMiddleware());
    } else {
      given(typeof f.subagent === "object" && f.subagent);
    }
    if (f.loop_detection === true) add(SLOT.LoopDetection, createLoopDetectionMiddleware());
    else given(typeof f.loop_detection === "object" && f.loop_detection);
    if (f.token_budget === true) add(SLOT.TokenBudget, createTokenBudgetMiddleware({ enabled: true }));
    else given(typeof f.token_budget === "object" && f.token_budget);
    add(SLOT.Clarification, createClarificationMiddleware());
    featureTools.push(askClarificationTool);
    // The lead agent's slots (capabilities/chain-slots.ts); extras are anchored after that.
    chain = placeExtras(placeInChain(slotted), options.extraMiddleware ?? []);
  }
  const names = new Set(tools.map((t) => t.name));
  const allTools = [...tools, ...featureTools.filter((t) => !names.has(t.name))];
  return createAgent<ThreadState>({
    model,
    tools: allTools,
    middleware: chain as AgentMiddleware<ThreadState>[],
    systemPrompt:
      options.systemPrompt ??
      buildSystemPrompt({
        clarification: allTools.some((t) => t.name === "ask_clarification"),
        subagents: registry && { enabled: true, maxConcurrent: 3, maxTotal: 6, available: registry.available().map((t) => ({ name: t.name, description: t.description })) },
      }),
    stateSchema: mergeSchemas(threadStateSchema, options.stateSchema),
    checkpointer: options.checkpointer,
    name: options.name ?? "default",
  });
}
