import type { StateUpdate } from "./channels";

/** Where a {@link Command} sends the run next. */
export type CommandGoto = "end" | "model";

/**
 * Returned by a tool (or a `wrapToolCall` middleware) to write state and
 * optionally redirect the run, as LangGraph's `Command`.
 */
export class Command {
  readonly update: StateUpdate;
  readonly goto?: CommandGoto;
  /** Resume value, when a Command is used as run input to resume an interrupt. */
  readonly resume?: unknown;

  constructor(init: { update?: StateUpdate; goto?: CommandGoto; resume?: unknown } = {}) {
    this.update = init.update ?? {};
    this.goto = init.goto;
    this.resume = init.resume;
  }
}

/** True when `v` is a {@link Command}. */
export function isCommand(v: unknown): v is Command {
  return v instanceof Command;
}
