/** A scripted tool call the server returns. `args` may be an object or raw (even invalid) JSON text. */
export interface HttpScriptedToolCall {
  name: string;
  args?: Record<string, unknown> | string;
  id?: string;
}

/** A scripted successful answer. */
export interface HttpScriptedResponse {
  text?: string;
  reasoning?: string;
  toolCalls?: HttpScriptedToolCall[];
  usage?: { input_tokens?: number; output_tokens?: number };
  /** OpenAI-style: `stop` (default), `tool_calls` (default with tool calls), `length`, `content_filter`. */
  finishReason?: string;
  /** Wait before answering (ms). */
  delayMs?: number;
  /** Wait between stream chunks (ms). */
  chunkDelayMs?: number;
}

/** Failures the server can inject. */
export type HttpFaultKind =
  | "rate_limit"
  | "insufficient_quota"
  | "server_error"
  | "overloaded"
  | "unauthorized"
  | "bad_request"
  | "context_length"
  | "hang"
  | "malformed_chunk"
  | "cut_stream";

/** A scripted failure. */
export interface HttpScriptedFault {
  fault: HttpFaultKind;
  /** `Retry-After` header in seconds (rate_limit/overloaded/server_error). */
  retryAfter?: number;
  message?: string;
  /** Text streamed before `malformed_chunk` / `cut_stream`. */
  partialText?: string;
  /**
   * Error faults only: append the request's own credential headers (`authorization`, `x-api-key`,
   * `api-key`), unredacted, to the error message, as misconfigured proxies and some gateways do, so a
   * test can prove the key never reaches what the client streams or stores.
   */
  echoCredentials?: boolean;
}

/** A recorded request (the Authorization / x-api-key headers are redacted in `headers`). */
export interface RecordedLLMRequest {
  method: string;
  path: string;
  /** Lower-cased headers with credentials redacted. */
  headers: Record<string, string>;
  /** The parsed JSON body (null when there was none or it was not JSON). */
  body: Record<string, unknown> | null;
  /** Which API the request used. */
  api: "openai" | "anthropic" | "other";
  /** Raw credential header values, for assertions only (not enumerable, never printed). */
  readonly credentials?: { authorization?: string; apiKey?: string };
}

/** One step: a text answer, a response, a fault, or a function of the request. */
export type HttpScriptStep =
  | string
  | HttpScriptedResponse
  | HttpScriptedFault
  | ((request: RecordedLLMRequest, index: number) => HttpScriptStep);

/** True for fault steps. */
export function isFault(step: HttpScriptStep): step is HttpScriptedFault {
  return typeof step === "object" && step !== null && "fault" in step;
}

/** Redact a credential for display: keep a short prefix only. */
export function redactSecret(value: string): string {
  const v = value.replace(/^Bearer\s+/i, "");
  const prefix = /^Bearer\s+/i.test(value) ? "Bearer " : "";
  return `${prefix}${v.slice(0, 3)}…[REDACTED]`;
}

/** Headers with credentials redacted, keys lower-cased. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const key = k.toLowerCase();
    const value = Array.isArray(raw) ? raw.join(", ") : raw;
    out[key] = key === "authorization" || key === "x-api-key" || key === "api-key" ? redactSecret(value) : value;
  }
  return out;
}
