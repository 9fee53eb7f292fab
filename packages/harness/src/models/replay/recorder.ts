import fs from "node:fs";
import path from "node:path";
import type { AIMessage } from "../../messages";
import { AIMessageAccumulator } from "../accumulate";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../types";
import type { ReplayFixture, ReplayTurn } from "./fixture";
import { normalizeReplayCaller, replayConversationHash, replayInputKey } from "./key";

/** The environment variable that makes every model a recording one: turns are appended to this JSONL file. */
export const REPLAY_RECORD_ENV = "DEERFLOW_RECORD_OUT";

/** A reply as LangChain's `messages_to_dict` writes an `AIMessage` (the `output` of a fixture turn). */
function toMessageDict(reply: AIMessage): ReplayTurn["output"] {
  return {
    type: "ai",
    data: {
      content: reply.content,
      additional_kwargs: reply.additional_kwargs,
      response_metadata: reply.response_metadata,
      type: "ai",
      name: reply.name ?? null,
      id: reply.id ?? null,
      tool_calls: reply.tool_calls.map((tc) => ({ name: tc.name, args: tc.args, id: tc.id, type: "tool_call" })),
      invalid_tool_calls: reply.invalid_tool_calls,
      usage_metadata: reply.usage_metadata ? { ...reply.usage_metadata } : null,
    },
  };
}

/** The fixture turn of one call: its caller, both hashes and the reply. */
export function replayTurnOf(request: Pick<ModelRequest, "messages" | "caller">, reply: AIMessage): ReplayTurn {
  const caller = normalizeReplayCaller(request.caller);
  const conversationHash = replayConversationHash(request.messages);
  return { caller, conversation_hash: conversationHash, input_hash: replayInputKey(conversationHash, caller), output: toMessageDict(reply) };
}

/**
 * Wrap a model so each completed call is handed to `onTurn` as a fixture turn (DeerFlow's format);
 * the stream itself passes through unchanged. A call that fails records nothing.
 */
export function createRecordingChatModel(inner: ChatModel, onTurn: (turn: ReplayTurn) => void): ChatModel {
  return {
    provider: inner.provider,
    modelName: inner.modelName,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
      const acc = new AIMessageAccumulator(undefined, { model_provider: inner.provider, model_name: inner.modelName });
      for await (const part of inner.stream(request)) {
        acc.push(part, false);
        yield part;
      }
      onTurn(replayTurnOf(request, acc.finish()));
    },
  };
}

/** An `onTurn` that appends each turn as one JSON line to `file` (created with its directory). */
export function appendReplayTurnTo(file: string): (turn: ReplayTurn) => void {
  return (turn) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(file, `${JSON.stringify(turn)}\n`);
  };
}

/** Read the turns a recording appended to `file`. */
export function readRecordedTurns(file: string): ReplayTurn[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as ReplayTurn);
}

/** Stitch recorded turns and the scenario's description into a fixture, as DeerFlow's fixtures are laid out. */
export function buildReplayFixture(meta: { scenario: string; mode: string; model: string; prompt: string; context?: Record<string, unknown> }, turns: ReplayTurn[]): ReplayFixture {
  return { scenario: meta.scenario, mode: meta.mode, model: meta.model, prompt: meta.prompt, context: meta.context ?? {}, turns };
}
