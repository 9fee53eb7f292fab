import type { ChatModel, ModelRequest, ModelStreamPart } from "../../packages/harness/src/models";

/** Name of the no-op tool both agents call once per turn. */
export const NOOP_TOOL = "noop";

/**
 * A ChatModel with (almost) zero cost, so a bench measures the runtime and
 * not a test double: no delays, no request recording, no copying.
 *
 * One turn is model → tool → model: when the last message is a tool result
 * (or no tools are offered) it answers with text; otherwise it calls
 * {@link NOOP_TOOL} once.
 */
export class InstantModel implements ChatModel {
  readonly provider = "bench";
  readonly modelName = "instant";
  private calls = 0;

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const last = request.messages[request.messages.length - 1];
    const n = ++this.calls;
    if (last?.type === "tool" || !request.tools.some((t) => t.name === NOOP_TOOL)) {
      yield { type: "text-delta", text: "done" };
      yield { type: "finish", finishReason: "stop", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
      return;
    }
    yield { type: "tool-call-delta", index: 0, id: `call_${n}`, name: NOOP_TOOL, argsDelta: "{}" };
    yield { type: "finish", finishReason: "tool_calls", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
  }
}
