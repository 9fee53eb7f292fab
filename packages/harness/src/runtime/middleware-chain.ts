import type { AIMessage } from "../messages";
import type { AgentState } from "../state";
import type {
  AgentMiddleware,
  HookResult,
  ModelCallHandler,
  ModelCallRequest,
  ToolCallHandler,
  ToolCallRequest,
  ToolCallResult,
  Runtime,
} from "./types";

/**
 * Compose `wrapModelCall` hooks around the innermost handler: the first
 * middleware in the list is the outermost layer (LangChain ordering).
 */
export function composeModelCall<S extends AgentState>(
  middleware: readonly AgentMiddleware<S>[],
  inner: ModelCallHandler<S>,
): ModelCallHandler<S> {
  let handler = inner;
  for (let i = middleware.length - 1; i >= 0; i--) {
    if (middleware[i].wrapModelCall) handler = modelLayer(middleware[i], handler);
  }
  return handler;
}

// The layers are made by calls rather than assigned arrows: a run composes its chains once, and the TypeScript
// loader names every arrow assigned to a variable, at each creation.
function modelLayer<S extends AgentState>(mw: AgentMiddleware<S>, next: ModelCallHandler<S>): ModelCallHandler<S> {
  return (req: ModelCallRequest<S>): Promise<AIMessage> => mw.wrapModelCall!(req, next);
}

function toolLayer<S extends AgentState>(mw: AgentMiddleware<S>, next: ToolCallHandler<S>): ToolCallHandler<S> {
  return (req: ToolCallRequest<S>): Promise<ToolCallResult> => mw.wrapToolCall!(req, next);
}

/** Compose `wrapToolCall` hooks; the first middleware is the outermost layer. */
export function composeToolCall<S extends AgentState>(
  middleware: readonly AgentMiddleware<S>[],
  inner: ToolCallHandler<S>,
): ToolCallHandler<S> {
  let handler = inner;
  for (let i = middleware.length - 1; i >= 0; i--) {
    if (middleware[i].wrapToolCall) handler = toolLayer(middleware[i], handler);
  }
  return handler;
}

/** The hook names a middleware can implement around the loop. */
export type LoopHook = "beforeAgent" | "beforeModel" | "afterModel" | "afterAgent";

/**
 * Call a middleware's `hook` (as its method, read when called). Each hook is read by its own name: reading it by a
 * key that changes with the hook (`mw[hook]`) is a megamorphic keyed load, the costliest kind of property read,
 * and a turn with 8 middlewares makes 48 of them.
 */
export function callHook<S extends AgentState>(mw: AgentMiddleware<S>, hook: LoopHook, state: S, runtime: Runtime<S>): HookResult | Promise<HookResult> {
  switch (hook) {
    case "beforeAgent":
      return mw.beforeAgent!(state, runtime);
    case "beforeModel":
      return mw.beforeModel!(state, runtime);
    case "afterModel":
      return mw.afterModel!(state, runtime);
    case "afterAgent":
      return mw.afterAgent!(state, runtime);
  }
}

/** Node names as LangGraph reports them in `updates` (e.g. `TitleMiddleware.after_model`). */
export const HOOK_NODE_SUFFIX: Record<LoopHook, string> = {
  beforeAgent: "before_agent",
  beforeModel: "before_model",
  afterModel: "after_model",
  afterAgent: "after_agent",
};

/** Middlewares implementing `hook`, in execution order (`after*` hooks run in reverse). */
export function hookOrder<S extends AgentState>(middleware: readonly AgentMiddleware<S>[], hook: LoopHook): AgentMiddleware<S>[] {
  const list = middleware.filter((m) => typeof m[hook] === "function");
  return hook === "afterModel" || hook === "afterAgent" ? list.reverse() : list;
}

/** One middleware's hook as the loop runs it, with the node name its `updates` event carries. */
export interface HookStep<S extends AgentState> {
  readonly mw: AgentMiddleware<S>;
  /** `<middleware name>.<hook suffix>`, e.g. `TitleMiddleware.after_model`. */
  readonly node: string;
}

/** Each loop hook's steps in execution order: what every run of an agent walks, built once per middleware list. */
export type HookPlan<S extends AgentState> = Readonly<Record<LoopHook, readonly HookStep<S>[]>>;

/**
 * The {@link HookPlan} of a middleware list. A run calls its hooks six times
 * per model round trip; listing them (and naming their nodes) once per agent
 * keeps that walk free of filtering, reversing and string building.
 */
export function hookPlan<S extends AgentState>(middleware: readonly AgentMiddleware<S>[]): HookPlan<S> {
  const steps = (hook: LoopHook): HookStep<S>[] => hookOrder(middleware, hook).map((mw) => ({ mw, node: `${mw.name}.${HOOK_NODE_SUFFIX[hook]}` }));
  return { beforeAgent: steps("beforeAgent"), beforeModel: steps("beforeModel"), afterModel: steps("afterModel"), afterAgent: steps("afterAgent") };
}
