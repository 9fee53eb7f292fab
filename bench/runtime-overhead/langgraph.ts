import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent, createMiddleware, tool } from "langchain";
import { z } from "zod";
import { NOOP_TOOL } from "./instant-model";

/**
 * The reference's instant model: a minimal BaseChatModel that answers from the
 * last message (tool result → text, otherwise one call of the no-op tool).
 * `bindTools` returns the same instance: nothing to bind for a scripted model.
 */
export class InstantLangChainModel extends BaseChatModel {
  private calls = 0;

  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return "bench-instant";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages[messages.length - 1];
    const n = ++this.calls;
    const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2 };
    const message =
      last && last.getType() === "tool"
        ? new AIMessage({ content: "done", id: `ai_${n}`, usage_metadata: usage })
        : new AIMessage({
            content: "",
            id: `ai_${n}`,
            tool_calls: [{ id: `call_${n}`, name: NOOP_TOOL, args: {}, type: "tool_call" }],
            usage_metadata: usage,
          });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

const noopTool = tool(async () => "ok", {
  name: NOOP_TOOL,
  description: "Does nothing and returns 'ok'.",
  schema: z.object({}),
});

function noopMiddleware(name: string) {
  return createMiddleware({
    name,
    beforeAgent: () => undefined,
    beforeModel: () => undefined,
    afterModel: () => undefined,
    afterAgent: () => undefined,
    wrapModelCall: (request, handler) => handler(request),
    wrapToolCall: (request, handler) => handler(request),
  });
}

/** The reference agent plus its saver. */
export interface ReferenceSetup {
  agent: { invoke(input: unknown, config: unknown): Promise<{ messages: BaseMessage[] }> };
  /** The SQLite saver (undefined when the agent uses LangGraph's in-memory MemorySaver). */
  saver?: SqliteSaver;
}

/**
 * LangChain JS v1 createAgent with `middlewareCount` no-op middlewares and
 * SqliteSaver at `dbPath` (or MemorySaver when `dbPath` is null).
 */
export function buildReferenceAgent(dbPath: string | null, middlewareCount = 8): ReferenceSetup {
  const saver = dbPath === null ? undefined : SqliteSaver.fromConnString(dbPath);
  const agent = createAgent({
    model: new InstantLangChainModel(),
    tools: [noopTool],
    middleware: Array.from({ length: middlewareCount }, (_, i) => noopMiddleware(`noop_${i}`)),
    systemPrompt: "You are a benchmark agent.",
    checkpointer: saver ?? new MemorySaver(),
  });
  return { agent: agent as unknown as ReferenceSetup["agent"], saver };
}

/**
 * One reference turn on `threadId`, checked like ours. Each of the 8×4
 * before/after hooks is a graph step, so the default recursion limit (25)
 * is raised. Returns the thread's messages after the turn.
 */
export async function referenceTurn(setup: ReferenceSetup, threadId: string, text: string): Promise<BaseMessage[]> {
  const out = await setup.agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: threadId }, recursionLimit: 1000 });
  const tail = out.messages.slice(-3).map((m) => m.getType()).join(",");
  if (tail !== "ai,tool,ai") throw new Error(`reference turn on ${threadId} ended with [${tail}], expected [ai,tool,ai]`);
  return out.messages;
}

/** Bytes SqliteSaver holds for a thread (checkpoint + metadata blobs and pending writes). */
export function referenceStoredBytes(saver: SqliteSaver, threadId: string): number {
  const cp = saver.db
    .prepare("SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS n FROM checkpoints WHERE thread_id = ?")
    .get(threadId) as { n: number };
  const wr = saver.db.prepare("SELECT COALESCE(SUM(LENGTH(value)), 0) AS n FROM writes WHERE thread_id = ?").get(threadId) as { n: number };
  return cp.n + wr.n;
}
