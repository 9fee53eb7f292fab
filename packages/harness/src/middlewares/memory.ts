import { z } from "zod";
import type { Message } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { parseMiddlewareOptions } from "./zod-options";

/** Where finished conversations go (the memory service's `enqueue`). */
export interface MemorySink {
  enqueue(input: { threadId: string; userId?: string | null; agentName?: string | null; messages: readonly Message[] }): { queued: boolean; reason?: string; signals?: string[] } | void | Promise<{ queued: boolean; reason?: string; signals?: string[] } | void>;
}

const optionsSchema = z.object({
  enabled: z.boolean().default(true),
  /** Fixed agent name (else the run's `context.identity.agentName`). */
  agent_name: z.string().nullish(),
});

/** Options of {@link createMemoryMiddleware}. */
export type MemoryMiddlewareOptions = z.input<typeof optionsSchema> & { sink: MemorySink };

/**
 * DeerFlow's `MemoryMiddleware` (after_agent, chain #22, after Title): hands
 * the run's conversation to the memory queue. Filtering, debouncing and the
 * updater call all happen off the run, so the run never waits for memory and
 * a memory failure never changes its result. The user id is taken from the
 * run context now, at enqueue time, because the update runs later.
 */
export function createMemoryMiddleware(options: MemoryMiddlewareOptions): AgentMiddleware {
  const { sink, ...rest } = options;
  if (!sink || typeof sink.enqueue !== "function") throw new TypeError("MemoryMiddleware: option 'sink' must have an enqueue() method");
  const o = parseMiddlewareOptions("MemoryMiddleware", optionsSchema, rest);
  return {
    name: "MemoryMiddleware",
    afterAgent(state, runtime) {
      if (!o.enabled) return;
      const { userId, agentName } = runtime.context.identity;
      const agent = o.agent_name ?? agentName;
      try {
        const queued = sink.enqueue({ threadId: runtime.threadId, userId, agentName: agent, messages: state.messages });
        // the run does not wait for memory (its index may be a database away), nor fail with it
        if (queued instanceof Promise) queued.catch(() => undefined);
      } catch {
        // Memory is best-effort: a failure here must not fail the run (the next turn re-feeds the conversation).
      }
    },
  };
}
