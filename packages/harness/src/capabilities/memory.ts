import { createMemoryMiddleware } from "../middlewares/memory";
import { attachMemory, createMemoryTools } from "../memory";
import type { MemoryService } from "../memory";
import { SLOT } from "./chain-slots";
import type { Capability } from "./types";

/**
 * Long-term memory: one service per runtime (`memory.enabled: false` = none),
 * flushed when the runtime closes and forgetting deleted threads. In an
 * agent: DynamicContext's `<memory>` block (its provider), the Memory
 * middleware queueing finished conversations (lead only), and the memory
 * tools when `memory.mode` is `tool`.
 */
export const memoryCapability: Capability<MemoryService, "memory"> = {
  name: "memory",
  attach(host, options) {
    const service = attachMemory(host, { modelFactory: options.modelFactory, log: options.log });
    if (!service) return undefined;
    return {
      service,
      threadDeleted: (threadId, userId) => service.forgetThread(threadId, userId),
      close: () => service.close(),
    };
  },
  forAgent(ctx, memory) {
    if (!memory) return undefined;
    const toolMode = memory.config.enabled && memory.config.mode === "tool";
    return {
      tools: toolMode ? createMemoryTools(memory) : undefined,
      memoryProvider: memory.provider,
      middlewares: (form) => (form.subagent ? [] : [{ slot: SLOT.Memory, middleware: createMemoryMiddleware({ sink: memory, agent_name: ctx.customAgent?.name }) }]),
    };
  },
};
