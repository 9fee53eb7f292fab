import { DeerFlowError, ModelCallError } from "../errors";
import type { ModelErrorKind } from "../errors";
import { contentText } from "../messages";
import type { UsageMetadata } from "../messages";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../models/types";

/** A scripted tool call. `args` may be an object or raw (possibly invalid) JSON text. */
export interface ScriptedToolCall {
  name: string;
  args?: Record<string, unknown> | string;
  id?: string;
}

/** One scripted response. */
export interface ScriptedResponse {
  text?: string;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: Partial<UsageMetadata>;
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Milliseconds to wait before the first part. */
  delayMs?: number;
}

/** A scripted failure: the model call throws. */
export interface ScriptedError {
  error: {
    kind: ModelErrorKind;
    message?: string;
    status?: number;
    retryAfterMs?: number;
    providerCode?: string;
  };
  /** Emit this text before failing (a stream that breaks mid-way). */
  partialText?: string;
}

/** One step of a script: a final text, a response, an error, or a function of the request. */
export type ScriptStep = string | ScriptedResponse | ScriptedError | ((request: ModelRequest, callIndex: number) => ScriptStep);

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** Model id reported by the model (default `scripted`). */
  modelName?: string;
  /** What to do when the script runs out: throw (default) or repeat the last step. */
  onExhausted?: "error" | "repeat-last";
  /** Split text deltas into pieces of about this many characters (default: word by word). */
  chunkChars?: number;
  /** Delay in ms before every response (fixed model latency, for benchmarks). */
  latencyMs?: number;
  /** Record requests in {@link ScriptedModel.requests} (default true; benchmarks turn it off). */
  recordRequests?: boolean;
}

/**
 * Thrown by {@link ScriptedModel.assertComplete} when a test left scripted
 * steps unconsumed or made calls past the end of the script (code
 * `scripted_model_incomplete`).
 */
export class ScriptIncompleteError extends DeerFlowError {
  constructor(message: string, details: Record<string, unknown>) {
    super("scripted_model_incomplete", message, { details });
  }
}

/** A one-line description of a step, for error messages. */
export function describeScriptStep(step: ScriptStep): string {
  if (typeof step === "function") return "a function of the request";
  if (typeof step === "string") return `text ${JSON.stringify(step.length > 60 ? `${step.slice(0, 60)}…` : step)}`;
  if (isError(step)) return `error '${step.error.kind}'`;
  const parts: string[] = [];
  if (step.toolCalls?.length) parts.push(`tool calls [${step.toolCalls.map((c) => c.name).join(", ")}]`);
  if (step.text) parts.push(`text ${JSON.stringify(step.text.length > 60 ? `${step.text.slice(0, 60)}…` : step.text)}`);
  if (step.reasoning) parts.push("reasoning");
  return parts.join(" + ") || "an empty response";
}

function isError(step: ScriptStep): step is ScriptedError {
  return typeof step === "object" && step !== null && "error" in step;
}

function splitText(text: string, chunkChars?: number): string[] {
  if (!text) return [];
  if (chunkChars && chunkChars > 0) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += chunkChars) out.push(text.slice(i, i + chunkChars));
    return out;
  }
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

function estimateTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * An in-process model that replays a script: text (streamed word by word),
 * reasoning, tool calls (arguments streamed as JSON fragments), usage and
 * errors. It records every request it receives in {@link requests}.
 *
 * This is a test double, part of the public testing API. It is not a model.
 */
export class ScriptedModel implements ChatModel {
  readonly provider = "scripted";
  readonly modelName: string;
  /** Every request received, in order (messages are deep-copied). */
  readonly requests: ModelRequest[] = [];
  private readonly steps: ScriptStep[];
  private readonly options: ScriptedModelOptions;
  private cursor = 0;
  private calls = 0;
  /** 1-based numbers of the calls that found the script exhausted. */
  private readonly overruns: number[] = [];

  constructor(steps: ScriptStep[] = [], options: ScriptedModelOptions = {}) {
    this.steps = [...steps];
    this.options = options;
    this.modelName = options.modelName ?? "scripted";
  }

  /** Append more steps to the script. */
  push(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** Number of calls made so far. */
  get callCount(): number {
    return this.calls;
  }

  /** Steps not consumed yet. */
  get remaining(): number {
    return Math.max(0, this.steps.length - this.cursor);
  }

  /**
   * Throw a {@link ScriptIncompleteError} unless every scripted step was
   * consumed and no call went past the end of the script. Call it at the end
   * of a test (e.g. in `afterEach`) so an agent that stops early or loops
   * longer than scripted fails loudly.
   */
  assertComplete(): void {
    const problems: string[] = [];
    if (this.cursor < this.steps.length) {
      const left = this.steps.slice(this.cursor).map((s, i) => `  step #${this.cursor + i + 1}: ${describeScriptStep(s)}`);
      problems.push(`${left.length} of ${this.steps.length} scripted step(s) not consumed after ${this.calls} call(s):\n${left.join("\n")}`);
    }
    if (this.overruns.length) {
      problems.push(`call(s) #${this.overruns.join(", #")} went past the end of the script (${this.steps.length} step(s))`);
    }
    if (problems.length) {
      throw new ScriptIncompleteError(`ScriptedModel '${this.modelName}' script incomplete: ${problems.join("; ")}`, {
        calls: this.calls,
        scriptLength: this.steps.length,
        unconsumed: Math.max(0, this.steps.length - this.cursor),
        overruns: [...this.overruns],
      });
    }
  }

  /** The last request received. */
  get lastRequest(): ModelRequest | undefined {
    return this.requests[this.requests.length - 1];
  }

  private nextStep(request: ModelRequest): string | ScriptedResponse | ScriptedError {
    const index = this.calls - 1;
    let step: ScriptStep | undefined;
    if (this.cursor < this.steps.length) {
      step = this.steps[this.cursor++];
    } else if (this.options.onExhausted === "repeat-last" && this.steps.length) {
      step = this.steps[this.steps.length - 1];
    } else {
      // Recorded as well as thrown: a middleware may turn the throw into an
      // error message, and assertComplete() must still fail the test.
      this.overruns.push(this.calls);
      throw new ModelCallError(
        `ScriptedModel: call #${this.calls} (index ${index}) is past the end of the script: script exhausted after ${this.steps.length} step(s). ` +
          "Add steps, or pass onExhausted: \"repeat-last\".",
        { kind: "unknown", details: { callIndex: index, scriptLength: this.steps.length } },
      );
    }
    while (typeof step === "function") step = step(request, index);
    return step as string | ScriptedResponse | ScriptedError;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.calls++;
    if (this.options.recordRequests !== false) {
      this.requests.push({
        messages: structuredClone(request.messages),
        tools: request.tools.map((t) => ({ ...t })),
        settings: request.settings ? structuredClone(request.settings) : undefined,
      });
    }
    const step = this.nextStep(request);
    if (this.options.latencyMs) await sleep(this.options.latencyMs, request.signal);
    if (isError(step)) {
      if (step.partialText) for (const t of splitText(step.partialText, this.options.chunkChars)) yield { type: "text-delta", text: t };
      const e = step.error;
      throw new ModelCallError(e.message ?? `Scripted ${e.kind} error`, {
        kind: e.kind,
        status: e.status,
        retryAfterMs: e.retryAfterMs,
        providerCode: e.providerCode,
      });
    }
    const resp: ScriptedResponse = typeof step === "string" ? { text: step } : (step as ScriptedResponse);
    if (resp.delayMs) await sleep(resp.delayMs, request.signal);
    if (resp.reasoning) {
      for (const t of splitText(resp.reasoning, this.options.chunkChars)) yield { type: "reasoning-delta", text: t };
    }
    for (const t of splitText(resp.text ?? "", this.options.chunkChars)) {
      if (request.signal?.aborted) throw request.signal.reason ?? new Error("aborted");
      yield { type: "text-delta", text: t };
    }
    const calls = resp.toolCalls ?? [];
    for (let index = 0; index < calls.length; index++) {
      const c = calls[index];
      const argsText = typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {});
      const id = c.id ?? `call_${this.calls}_${index}`;
      const mid = Math.ceil(argsText.length / 2);
      yield { type: "tool-call-delta", index, id, name: c.name, argsDelta: argsText.slice(0, mid) };
      yield { type: "tool-call-delta", index, argsDelta: argsText.slice(mid) };
    }
    const inputChars = request.messages.reduce((n, m) => n + contentText(m.content).length, 0);
    const input = resp.usage?.input_tokens ?? Math.max(1, Math.ceil(inputChars / 4));
    const output = resp.usage?.output_tokens ?? estimateTokens((resp.text ?? "") + (resp.reasoning ?? "") + JSON.stringify(calls));
    yield {
      type: "finish",
      finishReason: resp.finishReason ?? (calls.length ? "tool_calls" : "stop"),
      usage: { input_tokens: input, output_tokens: output, total_tokens: resp.usage?.total_tokens ?? input + output },
      responseMetadata: { model_name: this.modelName },
    };
  }
}
