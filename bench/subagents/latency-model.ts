import type { ChatModel, ModelRequest, ModelStreamPart } from "../../packages/harness/src/models";

/** Name of the no-op tool a sub-agent calls on its first turn. */
export const NOOP_TOOL = "noop";

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

/**
 * A sub-agent model with a fixed latency per call and no other cost: the
 * first call asks for {@link NOOP_TOOL}, the second answers. Two calls per
 * sub-agent, as the bench prescribes.
 */
export class ChildLatencyModel implements ChatModel {
  readonly provider = "bench";
  readonly modelName = "child";
  calls = 0;
  constructor(private readonly latencyMs: number) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.calls++;
    await sleep(this.latencyMs);
    const last = request.messages[request.messages.length - 1];
    if (last?.type === "tool") {
      yield { type: "text-delta", text: "sub-task done" };
      yield { type: "finish", finishReason: "stop", usage: { input_tokens: 10, output_tokens: 3, total_tokens: 13 } };
      return;
    }
    yield { type: "tool-call-delta", index: 0, id: `n${this.calls}`, name: NOOP_TOOL, argsDelta: "{}" };
    yield { type: "finish", finishReason: "tool_calls", usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } };
  }
}

/**
 * The lead's model: `batches` responses of `perBatch` `task` calls, then a
 * final answer, each call after `latencyMs`.
 */
export class LeadLatencyModel implements ChatModel {
  readonly provider = "bench";
  readonly modelName = "lead";
  calls = 0;
  constructor(
    private readonly latencyMs: number,
    private readonly batches: number,
    private readonly perBatch: number,
  ) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    await sleep(this.latencyMs);
    const done = request.messages.filter((m) => m.type === "ai").length;
    const n = ++this.calls;
    if (done >= this.batches) {
      yield { type: "text-delta", text: "combined report" };
      yield { type: "finish", finishReason: "stop", usage: { input_tokens: 20, output_tokens: 3, total_tokens: 23 } };
      return;
    }
    for (let i = 0; i < this.perBatch; i++) {
      const args = JSON.stringify({ description: `part ${done}.${i}`, prompt: `work on part ${done}.${i}`, subagent_type: "general-purpose" });
      yield { type: "tool-call-delta", index: i, id: `t${n}_${i}`, name: "task", argsDelta: args };
    }
    yield { type: "finish", finishReason: "tool_calls", usage: { input_tokens: 20, output_tokens: 9, total_tokens: 29 } };
  }
}
