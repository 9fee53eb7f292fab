import type { ToolRuntime } from "../tools/types";
import type { RunChildFn } from "../runtime/child-run";

export { INHERITED_CONTEXT_KEYS, runChild } from "../runtime/child-run";
export type { ChildRunOptions, RunChildFn } from "../runtime/child-run";

/** The child-run primitive of one parent tool call (the runtime hands every tool `runtime.runChild`). */
export function bindRunChild(parent: ToolRuntime): RunChildFn {
  return parent.runChild;
}
