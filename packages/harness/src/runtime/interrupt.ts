import { randomUUID } from "node:crypto";
import type { Interrupt } from "./types";

/**
 * Thrown by `runtime.interrupt(value)` inside a tool to pause the run for a
 * human. Middlewares must let it propagate (see {@link isGraphInterrupt}).
 */
export class GraphInterrupt extends Error {
  readonly interrupt: Interrupt;

  constructor(value: unknown, toolCallId?: string) {
    super("Run interrupted: waiting for input");
    this.name = "GraphInterrupt";
    this.interrupt = { id: randomUUID(), value, toolCallId };
  }
}

/** True for the interrupt signal (which must never be turned into a tool error). */
export function isGraphInterrupt(err: unknown): err is GraphInterrupt {
  return err instanceof GraphInterrupt || (err instanceof Error && err.name === "GraphInterrupt");
}

/** True for an abort/cancellation error. */
export function isAbortError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === "AbortError" || err.name === "RunCancelledError" || (err as { code?: string }).code === "run_cancelled";
}
