import { ValidationError } from "../errors";
import type { ChatModel, ModelSettings } from "../models";
import { applyUpdate, baseStateSchema, initialState, mergeSchemas } from "../state";
import type { AgentState, StateSchema, StateUpdate } from "../state";
import type { ToolDefinition } from "../tools";
import { asCheckpointer } from "../checkpoints";
import type { Checkpointer, CheckpointStore, LoadedCheckpoint } from "../checkpoints";
import { NEXT_NODES_KEY } from "./loop-steps";
import { hookPlan } from "./middleware-chain";
import { RunExecution } from "./run-loop";
import type { AgentParts } from "./run-loop";
import type {
  Agent,
  AgentMiddleware,
  Interrupt,
  RunInput,
  RunOptions,
  RunResult,
  RunStream,
  StateSnapshot,
  StreamEvent,
} from "./types";

/** Options of {@link createAgent}. */
export interface CreateAgentOptions<S extends AgentState = AgentState> {
  model: ChatModel;
  tools?: ToolDefinition[];
  middleware?: AgentMiddleware<S>[];
  systemPrompt?: string;
  /** State schema (default: just `messages`). Middleware schemas are merged in. */
  stateSchema?: StateSchema;
  /** Where threads are persisted (default: in memory). */
  checkpointer?: CheckpointStore | Checkpointer;
  modelSettings?: ModelSettings;
  name?: string;
  /** Default per-tool timeout in ms (tools may set their own). */
  toolTimeoutMs?: number;
  /** Default max steps per run (model calls + tool steps; default 100). */
  recursionLimit?: number;
  /** What to do with duplicate tool names (default: first wins, warning logged). */
  onDuplicateTool?: (name: string) => void;
}

const THREAD_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Validate a thread id (`^[A-Za-z0-9_-]{1,64}$`). */
export function assertThreadId(threadId: string): void {
  if (!THREAD_ID.test(threadId)) {
    throw new ValidationError(`Invalid thread id '${threadId}': expected 1-64 letters, digits, '_' or '-'`, {
      code: "invalid_thread_id",
    });
  }
}

function snapshotOf<S extends AgentState>(loaded: LoadedCheckpoint, schema: StateSchema): StateSnapshot<S> {
  const interrupts = (loaded.record.metadata.interrupts as Interrupt[] | undefined) ?? [];
  const { [NEXT_NODES_KEY]: pending, ...metadata } = loaded.record.metadata as Record<string, unknown>;
  const next = interrupts.length ? ["tools"] : Array.isArray(pending) ? (pending as string[]) : [];
  return {
    values: { ...initialState(schema), ...loaded.values } as S,
    checkpointId: loaded.record.checkpointId,
    parentCheckpointId: loaded.record.parentId,
    createdAt: loaded.record.createdAt,
    metadata,
    next,
    interrupts,
  };
}

/**
 * Build an agent: a model, tools and a middleware chain run by a lean loop
 * (hooks are plain function calls, checkpoints store deltas).
 */
export function createAgent<S extends AgentState = AgentState>(options: CreateAgentOptions<S>): Agent<S> {
  if (!options.model) throw new ValidationError("createAgent: a model is required");
  const middleware = options.middleware ?? [];
  const names = new Set<string>();
  for (const mw of middleware) {
    if (!mw || typeof mw.name !== "string" || !mw.name) throw new ValidationError("createAgent: every middleware needs a name");
    if (names.has(mw.name)) throw new ValidationError(`createAgent: duplicate middleware '${mw.name}'`);
    names.add(mw.name);
  }
  const schema = mergeSchemas(options.stateSchema ?? baseStateSchema, ...middleware.map((m) => m.stateSchema));
  const tools = new Map<string, ToolDefinition>();
  const warnDup = options.onDuplicateTool ?? ((n: string) => console.warn(`[deerflow] duplicate tool '${n}' ignored`));
  for (const t of [...(options.tools ?? []), ...middleware.flatMap((m) => m.tools ?? [])]) {
    if (tools.has(t.name)) {
      if (tools.get(t.name) !== t) warnDup(t.name);
      continue;
    }
    tools.set(t.name, t);
  }
  const checkpointer = asCheckpointer(options.checkpointer);
  const parts: AgentParts<S> = {
    name: options.name ?? "agent",
    model: options.model,
    systemPrompt: options.systemPrompt,
    modelSettings: options.modelSettings ?? {},
    schema,
    tools,
    middleware,
    hooks: hookPlan(middleware),
    checkpointer,
    toolTimeoutMs: options.toolTimeoutMs,
    defaultRecursionLimit: options.recursionLimit ?? 100,
  };

  function stream(input: RunInput, runOptions: RunOptions = {}): RunStream<S> {
    if (runOptions.threadId) assertThreadId(runOptions.threadId);
    const exec = new RunExecution<S>(parts, runOptions);
    const result = exec.execute(input);
    return {
      result,
      [Symbol.asyncIterator]: (): AsyncIterator<StreamEvent> => exec.events[Symbol.asyncIterator](),
    };
  }

  async function invoke(input: RunInput, runOptions: RunOptions = {}): Promise<RunResult<S>> {
    return stream(input, { ...runOptions, streamMode: runOptions.streamMode ?? [] }).result;
  }

  const view = createThreadStateView<S>(checkpointer, schema);

  return {
    name: parts.name,
    stateSchema: schema,
    tools: [...tools.values()],
    middleware,
    stream,
    invoke,
    getState: view.getState,
    getStateHistory: view.getStateHistory,
    updateState: view.updateState,
  };
}

/** Reading and writing a thread's state outside a run: what only needs the checkpointer and the state schema. */
export interface ThreadStateView<S extends AgentState = AgentState> {
  getState(threadId: string, checkpointId?: string): Promise<StateSnapshot<S> | undefined>;
  getStateHistory(threadId: string, options?: { limit?: number; before?: string }): Promise<StateSnapshot<S>[]>;
  updateState(threadId: string, update: StateUpdate, options?: { checkpointId?: string; asNode?: string }): Promise<StateSnapshot<S>>;
}

/**
 * State reads and writes over a checkpointer, without a model or tools (the
 * same functions an agent's `getState`/`getStateHistory`/`updateState` use),
 * so a server can read a thread without building an agent.
 */
export function createThreadStateView<S extends AgentState = AgentState>(
  storeOrCheckpointer: CheckpointStore | Checkpointer,
  schema: StateSchema,
): ThreadStateView<S> {
  const checkpointer = asCheckpointer(storeOrCheckpointer);
  async function getState(threadId: string, checkpointId?: string): Promise<StateSnapshot<S> | undefined> {
    const loaded = await checkpointer.load(threadId, checkpointId);
    return loaded ? snapshotOf<S>(loaded, schema) : undefined;
  }

  async function getStateHistory(threadId: string, opts: { limit?: number; before?: string } = {}): Promise<StateSnapshot<S>[]> {
    const records = await checkpointer.list(threadId, opts);
    const out: StateSnapshot<S>[] = [];
    for (const rec of records) {
      const loaded = await checkpointer.load(threadId, rec.checkpointId);
      if (loaded) out.push(snapshotOf<S>(loaded, schema));
    }
    return out;
  }

  async function updateState(
    threadId: string,
    update: StateUpdate,
    opts: { checkpointId?: string; asNode?: string } = {},
  ): Promise<StateSnapshot<S>> {
    assertThreadId(threadId);
    const loaded = await checkpointer.load(threadId, opts.checkpointId);
    const base = loaded ? { ...initialState(schema), ...loaded.values } : initialState(schema);
    const next = applyUpdate(schema, base, update);
    const saved = await checkpointer.save(
      threadId,
      { checkpointId: loaded?.record.checkpointId ?? null, values: loaded?.values },
      next,
      { step: (loaded?.record.metadata.step ?? -1) + 1, source: "update", writer: opts.asNode ?? "update_state" },
    );
    return snapshotOf<S>(saved, schema);
  }

  return { getState, getStateHistory, updateState };
}
