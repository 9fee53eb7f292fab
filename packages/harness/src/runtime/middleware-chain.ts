import type { AIMessage } from "../messages";
import type { AgentState } from "../state";
import type {
  AgentMiddleware,
  ModelCallHandler,
  ModelCallRequest,
  ToolCallHandler,
  ToolCallRequest,
  ToolCallResult,
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
    const mw = middleware[i];
    if (!mw.wrapModelCall) continue;
    const next = handler;
    const wrap = mw.wrapModelCall.bind(mw);
    handler = (req: ModelCallRequest<S>): Promise<AIMessage> => wrap(req, next);
  }
  return handler;
}

/** Compose `wrapToolCall` hooks; the first middleware is the outermost layer. */
export function composeToolCall<S extends AgentState>(
  middleware: readonly AgentMiddleware<S>[],
  inner: ToolCallHandler<S>,
): ToolCallHandler<S> {
  let handler = inner;
  for (let i = middleware.length - 1; i >= 0; i--) {
    const mw = middleware[i];
    if (!mw.wrapToolCall) continue;
    const next = handler;
    const wrap = mw.wrapToolCall.bind(mw);
    handler = (req: ToolCallRequest<S>): Promise<ToolCallResult> => wrap(req, next);
  }
  return handler;
}

/** The hook names a middleware can implement around the loop. */
export type LoopHook = "beforeAgent" | "beforeModel" | "afterModel" | "afterAgent";

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
