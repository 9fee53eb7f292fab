import { z } from "zod";
import { SqliteCheckpointStore } from "../../packages/harness/src/checkpoints";
import { humanMessage } from "../../packages/harness/src/messages";
import { createAgent } from "../../packages/harness/src/runtime";
import type { Agent, AgentMiddleware } from "../../packages/harness/src/runtime";
import { tool } from "../../packages/harness/src/tools";
import { InstantModel, NOOP_TOOL } from "./instant-model";

/** The no-op tool of our agent. */
export const ourNoopTool = tool({
  name: NOOP_TOOL,
  description: "Does nothing and returns 'ok'.",
  schema: z.object({}),
  execute: () => "ok",
});

/** A middleware implementing all six hooks as pass-throughs. */
export function noopMiddleware(name: string): AgentMiddleware {
  return {
    name,
    beforeAgent: () => undefined,
    beforeModel: () => undefined,
    afterModel: () => undefined,
    afterAgent: () => undefined,
    wrapModelCall: (request, handler) => handler(request),
    wrapToolCall: (request, handler) => handler(request),
  };
}

/** Our agent under test plus the store it writes to. */
export interface OurSetup {
  agent: Agent;
  store: SqliteCheckpointStore;
}

/** createAgent with `middlewareCount` no-op middlewares and a SQLite store at `dbPath`. */
export function buildOurAgent(dbPath: string, middlewareCount = 8): OurSetup {
  const store = new SqliteCheckpointStore(dbPath);
  const agent = createAgent({
    name: "bench",
    model: new InstantModel(),
    tools: [ourNoopTool],
    middleware: Array.from({ length: middlewareCount }, (_, i) => noopMiddleware(`noop_${i}`)),
    systemPrompt: "You are a benchmark agent.",
    checkpointer: store,
  });
  return { agent, store };
}

/**
 * Run one turn (human → model → tool → model) on `threadId` and check that it
 * really happened; a bench that silently measures failures is worse than none.
 */
export async function ourTurn(agent: Agent, threadId: string, text: string): Promise<void> {
  const r = await agent.invoke({ messages: [humanMessage(text)] }, { threadId });
  if (r.status !== "success") throw new Error(`our run failed on ${threadId}: ${r.status} ${r.error?.message ?? ""}`);
  const tail = r.state.messages.slice(-3).map((m) => m.type).join(",");
  if (tail !== "ai,tool,ai") throw new Error(`our turn on ${threadId} ended with [${tail}], expected [ai,tool,ai]`);
}
