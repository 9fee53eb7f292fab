import { WebProviderError, WebRequestError } from "./errors";
import { httpRequest, responseHeader } from "./http-client";
import type { HttpResponse } from "./http-client";

/** Largest provider response accepted (search JSON, reader HTML). */
export const PROVIDER_MAX_BYTES = 8 * 1024 * 1024;

/** How one provider call is made. */
export interface ProviderRequest {
  /** Display name used in every message ("Serper", "Brave Search"…). */
  provider: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** JSON-serialised unless a string. */
  body?: unknown;
  timeoutMs: number;
  /** Secret values that must never appear in a message (the API key). */
  secrets?: Array<string | undefined>;
  signal?: AbortSignal;
}

/** Remove every secret value from a text. */
export function redact(text: string, secrets: Array<string | undefined> = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const n = Number(value.trim());
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - now) / 1000));
}

function providerDetail(body: Buffer): string {
  const text = body.toString("utf8").slice(0, 2000);
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const cand = j.error ?? j.message ?? j.detail ?? j.readableMessage;
    const msg = typeof cand === "string" ? cand : cand && typeof cand === "object" ? ((cand as { message?: unknown }).message ?? JSON.stringify(cand)) : undefined;
    return typeof msg === "string" ? msg.replace(/\s+/g, " ").slice(0, 200) : "";
  } catch {
    return "";
  }
}

/** Turn a non-2xx provider answer into a {@link WebProviderError} the model can act on. */
export function statusError(provider: string, res: HttpResponse, secrets: Array<string | undefined>): WebProviderError {
  const status = res.status;
  const detail = redact(providerDetail(res.body), secrets);
  const tail = detail ? `: ${detail}` : "";
  if (status === 401 || status === 403) return new WebProviderError(provider, `${provider} rejected the request (HTTP ${status}): check the API key${tail}`, { status });
  if (status === 429) {
    const retry = parseRetryAfter(responseHeader(res, "retry-after"));
    const when = retry !== undefined ? `; retry after ${retry} s` : "; retry later";
    return new WebProviderError(provider, `${provider} rate limit reached (HTTP 429)${when}${tail}`, { status, retryAfterSeconds: retry });
  }
  if (status >= 500) return new WebProviderError(provider, `${provider} is unavailable (HTTP ${status}); try again later${tail}`, { status });
  return new WebProviderError(provider, `${provider} rejected the request (HTTP ${status})${tail}`, { status });
}

/** Send one provider request; transport failures become {@link WebProviderError}. Any status is returned. */
export async function providerFetch(req: ProviderRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: "application/json", ...(req.headers ?? {}) };
  let body: string | undefined;
  if (req.body !== undefined) {
    body = typeof req.body === "string" ? req.body : JSON.stringify(req.body);
    if (!Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  }
  try {
    // No guard: the endpoint is the provider's configured base_url, chosen by the operator.
    return await httpRequest(req.url, { method: req.method ?? (body ? "POST" : "GET"), headers, body, timeoutMs: req.timeoutMs, maxBytes: PROVIDER_MAX_BYTES, maxRedirects: 0, signal: req.signal });
  } catch (err) {
    if (err instanceof WebRequestError && err.kind === "timeout") {
      throw new WebProviderError(req.provider, `${req.provider} request timed out after ${Math.round(req.timeoutMs / 100) / 10} s`, { cause: err });
    }
    const msg = err instanceof Error ? err.message : String(err);
    throw new WebProviderError(req.provider, `${req.provider} could not be reached: ${redact(msg, req.secrets)}`, { cause: err });
  }
}

/** {@link providerFetch} + status check + JSON parse. */
export async function providerJson<T = unknown>(req: ProviderRequest): Promise<T> {
  const res = await providerFetch(req);
  if (res.status < 200 || res.status >= 300) throw statusError(req.provider, res, req.secrets ?? []);
  try {
    return JSON.parse(res.body.toString("utf8")) as T;
  } catch {
    throw new WebProviderError(req.provider, `${req.provider} returned an invalid response (not JSON)`, { status: res.status });
  }
}

/** Fail with a shape error naming the provider. */
export function unexpectedShape(provider: string, what: string): WebProviderError {
  return new WebProviderError(provider, `${provider} returned an unexpected response format (${what})`);
}
