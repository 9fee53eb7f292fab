import { ModelCallError } from "../../errors";
import type { UsageMetadata } from "../../messages";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../types";
import { loadReplayFixture } from "./fixture";
import type { ReplayFixture, ReplayOutput } from "./fixture";
import { canonicalReplayConversation, normalizeReplayCaller, replayConversationHash, replayInputKey } from "./key";

/** The environment variable naming the fixture when the model entry sets no `fixture:`. */
export const REPLAY_FIXTURE_ENV = "DEERFLOW_REPLAY_FIXTURE";

/** Options of {@link ReplayChatModel}. */
export interface ReplayChatModelOptions {
  /** The fixture file (read once, at construction). */
  fixture: string;
  /** Reported as {@link ChatModel.modelName} (default: the fixture's `model`, else `replay`). */
  modelName?: string;
}

/** A call no recorded turn answers. */
export interface ReplayMiss {
  caller: string;
  inputHash: string;
  /** The normalised conversation that was hashed (what to compare with the recording). */
  conversation: string;
}

/**
 * A chat model that answers from a recorded fixture instead of a provider. Each call is matched by
 * its caller and its conversation (see `key.ts`), not by position, so callers may interleave as they
 * like; a key recorded several times is answered in recorded order. A call that matches nothing
 * fails loudly with the normalised input, which is the signal that the run diverged from the
 * recording. Tools offered to the call are ignored: the recorded reply carries its tool calls.
 */
export class ReplayChatModel implements ChatModel {
  readonly provider = "replay";
  readonly modelName: string;
  readonly fixturePath: string;
  readonly fixture: ReplayFixture;
  /** Every call that matched no recorded turn, in order. */
  readonly misses: ReplayMiss[] = [];
  private readonly table = new Map<string, ReplayOutput[]>();

  constructor(options: ReplayChatModelOptions) {
    this.fixturePath = options.fixture;
    this.fixture = loadReplayFixture(options.fixture);
    this.modelName = options.modelName ?? this.fixture.model ?? "replay";
    for (const turn of this.fixture.turns) {
      const bucket = this.table.get(turn.input_hash) ?? [];
      bucket.push(turn.output);
      this.table.set(turn.input_hash, bucket);
    }
  }

  /** The recorded reply for this request, consumed; a miss throws. */
  match(request: Pick<ModelRequest, "messages" | "caller">): ReplayOutput {
    const caller = normalizeReplayCaller(request.caller);
    const conversationHash = replayConversationHash(request.messages);
    const key = replayInputKey(conversationHash, caller);
    // Fixtures recorded before keys carried the caller are keyed by the conversation alone.
    const bucket = this.table.get(key)?.length ? this.table.get(key) : this.table.get(conversationHash);
    const hit = bucket?.shift();
    if (hit) return hit;
    const conversation = canonicalReplayConversation(request.messages);
    this.misses.push({ caller, inputHash: key, conversation });
    throw new ModelCallError(
      `Replay miss: no recorded reply for input hash ${key} (caller "${caller}") in ${this.fixturePath}. ` +
        "The run diverged from the recording (the agent makes different calls, a tool result changed, or a volatile value escaped normalisation). " +
        `Known hashes: ${[...this.table.keys()].sort().join(", ")}. Normalised input (first 800 characters): ${conversation.slice(0, 800)}`,
      { kind: "bad_request", details: { caller, input_hash: key, fixture: this.fixturePath } },
    );
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const { data } = this.match(request);
    const kwargs = data.additional_kwargs ?? {};
    if (typeof kwargs.reasoning_content === "string" && kwargs.reasoning_content) yield { type: "reasoning-delta", text: kwargs.reasoning_content };
    const text = typeof data.content === "string" ? data.content : data.content.map((b) => (b && typeof b === "object" && (b as { type?: unknown }).type === "text" ? String((b as { text?: unknown }).text ?? "") : "")).join("");
    if (text) yield { type: "text-delta", text };
    const calls = data.tool_calls ?? [];
    for (const [index, call] of calls.entries()) {
      yield { type: "tool-call-delta", index, id: call.id ?? undefined, name: call.name, argsDelta: JSON.stringify(call.args) };
    }
    const meta = data.response_metadata ?? {};
    const finishReason = typeof meta.finish_reason === "string" ? meta.finish_reason : calls.length ? "tool_calls" : "stop";
    yield {
      type: "finish",
      finishReason,
      usage: (data.usage_metadata ?? undefined) as UsageMetadata | undefined,
      responseMetadata: meta,
      messageId: data.id ?? undefined,
    };
  }
}
