import { ModelCallError } from "../errors";
import { redactSecretText } from "../persistence/redact";

/** Why a model call failed, as LLMErrorHandling classifies it. */
export type LLMErrorReason = "quota" | "auth" | "burst_rate" | "transient" | "busy" | "unreachable" | "generic";

/** HTTP statuses retried as transient. */
export const RETRIABLE_STATUS_CODES: ReadonlySet<number> = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

/** "Provider busy" text patterns (EN/ZH). */
export const BUSY_PATTERNS = [
  "server busy",
  "temporarily unavailable",
  "try again later",
  "please retry",
  "please try again",
  "overloaded",
  "high demand",
  "rate limit",
  "负载较高",
  "服务繁忙",
  "稍后重试",
  "请稍后重试",
] as const;

/** Out-of-quota / billing patterns (never retried). */
export const QUOTA_PATTERNS = ["insufficient_quota", "quota", "billing", "credit", "payment", "余额不足", "超出限额", "额度不足", "欠费"] as const;

/** Authentication / permission patterns (never retried). */
export const AUTH_PATTERNS = [
  "authentication",
  "unauthorized",
  "invalid api key",
  "invalid_api_key",
  "permission",
  "forbidden",
  "access denied",
  "无权",
  "未授权",
] as const;

/** Burst-rate throttling patterns (retried with the burst base and a budget of 2). */
export const BURST_PATTERNS = ["limit_burst_rate", "rate increased too quickly", "burst rate", "请求速率增长过快", "突发速率"] as const;

const TRANSIENT_KINDS = new Set(["timeout", "connection", "server", "empty_response", "rate_limit"]);
const TRANSIENT_ERROR_NAMES = new Set([
  "APITimeoutError",
  "APIConnectionError",
  "InternalServerError",
  "ReadError",
  "RemoteProtocolError",
  "StreamChunkTimeoutError",
]);

const matchesAny = (text: string, patterns: readonly string[]) => patterns.some((p) => text.includes(p));

/** The readable detail of an error (message, else class name). */
export function errorDetail(err: unknown): string {
  // Scrubbed here too: a model that is not built on the provider adapters may surface a raw provider text.
  if (err instanceof Error) return redactSecretText(err.message.trim()) || err.name || err.constructor.name;
  const s = redactSecretText(String(err ?? "").trim());
  return s || "UnknownError";
}

/** The provider error code (ModelCallError.providerCode, or `code`/`error_code` of foreign errors). */
export function providerErrorCode(err: unknown): string {
  if (err instanceof ModelCallError) return err.providerCode ?? "";
  if (err && typeof err === "object") {
    for (const key of ["code", "error_code"]) {
      const v = (err as Record<string, unknown>)[key];
      if (v !== undefined && v !== null && v !== "") return String(v);
    }
  }
  return "";
}

/** HTTP status of an error, when known. */
export function errorStatus(err: unknown): number | undefined {
  if (!err || typeof err !== "object") return undefined;
  const o = err as Record<string, unknown>;
  for (const key of ["status", "statusCode", "status_code"]) if (typeof o[key] === "number") return o[key] as number;
  const resp = o.response as Record<string, unknown> | undefined;
  if (resp && typeof resp.status === "number") return resp.status;
  return undefined;
}

/** Milliseconds the provider asked us to wait (`ModelCallError.retryAfterMs`, or a `Retry-After(-Ms)` header). */
export function retryAfterMs(err: unknown): number | undefined {
  if (err instanceof ModelCallError && typeof err.retryAfterMs === "number") return Math.max(0, Math.round(err.retryAfterMs));
  const headers = (err as { responseHeaders?: unknown; headers?: unknown } | null)?.responseHeaders ??
    (err as { headers?: unknown } | null)?.headers;
  if (!headers || typeof headers !== "object") return undefined;
  const get = (k: string): string | undefined => {
    const h = headers as Record<string, unknown> & { get?: (k: string) => unknown };
    const v = typeof h.get === "function" ? h.get(k) : (h[k] ?? h[k.toLowerCase()]);
    return v === undefined || v === null || v === "" ? undefined : String(v);
  };
  const ms = get("retry-after-ms");
  if (ms !== undefined && Number.isFinite(Number(ms))) return Math.max(0, Math.round(Number(ms)));
  const s = get("retry-after");
  if (s === undefined) return undefined;
  if (Number.isFinite(Number(s))) return Math.max(0, Math.round(Number(s) * 1000));
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Classify a failed model call: is it worth retrying, and why did it fail. */
export function classifyModelError(err: unknown): { retriable: boolean; reason: LLMErrorReason } {
  const detail = errorDetail(err).toLowerCase();
  const code = providerErrorCode(err).toLowerCase();
  const kind = err instanceof ModelCallError ? err.kind : undefined;
  if (kind === "quota" || matchesAny(detail, QUOTA_PATTERNS) || matchesAny(code, QUOTA_PATTERNS)) {
    return { retriable: false, reason: "quota" };
  }
  if (kind === "auth" || matchesAny(detail, AUTH_PATTERNS)) return { retriable: false, reason: "auth" };
  if (matchesAny(detail, BURST_PATTERNS) || matchesAny(code, BURST_PATTERNS)) return { retriable: true, reason: "burst_rate" };
  // A refused connection to a server on this machine means it is not running: one quick retry, not a backoff.
  if (err instanceof ModelCallError && code === "connection_refused" && err.details.local === true) return { retriable: true, reason: "unreachable" };
  if (kind && TRANSIENT_KINDS.has(kind)) return { retriable: true, reason: "transient" };
  if (err instanceof Error && TRANSIENT_ERROR_NAMES.has(err.name)) return { retriable: true, reason: "transient" };
  const status = errorStatus(err);
  if (status !== undefined && RETRIABLE_STATUS_CODES.has(status)) return { retriable: true, reason: "transient" };
  if (matchesAny(detail, BUSY_PATTERNS)) return { retriable: true, reason: "busy" };
  return { retriable: false, reason: "generic" };
}
