import type { z } from "zod";
import { linkSignals } from "../../abort";
import { PathAccessError, SandboxError } from "../../errors";
import { errorBodySchema } from "./wire";

/** A URL safe to show: credentials and query removed. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(invalid URL)";
  }
}

/** One JSON call. */
export interface JsonCall<T extends z.ZodType> {
  method: "GET" | "POST" | "DELETE";
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** Answer schema; a body that does not match is a `remote_protocol_error`. */
  schema: T;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the other side in messages ("provisioner", "sandbox …"). */
  what: string;
  /** Statuses answered with `undefined` instead of an error (e.g. 404 on GET). */
  okStatuses?: number[];
}

/** Raised by {@link callJson} when the caller's signal aborted the call (not a timeout). */
export class RemoteCallAborted extends SandboxError {
  constructor(what: string) {
    super(`${what}: call cancelled`, { code: "remote_call_cancelled" });
  }
}

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

/** Map a command-API error body to the error the host-side tools raise for the same failure. */
function remoteError(status: number, body: unknown, what: string): SandboxError {
  const parsed = errorBodySchema.safeParse(body);
  const detail = parsed.success && typeof parsed.data.detail === "string" ? parsed.data.detail : `HTTP ${status}`;
  const code = parsed.success ? parsed.data.code : undefined;
  if (code === "path_access_denied") return new PathAccessError(detail);
  if (status === 401 || status === 403) {
    return new SandboxError(`${what} refused the credentials (HTTP ${status}): ${detail}`, { code: "remote_unauthorized", details: { status } });
  }
  if (code) return new SandboxError(detail, { code, details: { status } });
  return new SandboxError(`${what} answered HTTP ${status}: ${detail}`, { code: status >= 500 ? "remote_server_error" : "remote_request_rejected", details: { status } });
}

/**
 * Send one JSON request and validate the answer. Every failure is a
 * SandboxError naming the other side by a credential-free URL: unreachable
 * (`remote_unreachable`), timed out (`remote_timeout`), refused credentials
 * (`remote_unauthorized`), an error answer (its own code), or a malformed
 * answer (`remote_protocol_error`).
 */
export async function callJson<T extends z.ZodType>(call: JsonCall<T>): Promise<z.output<T> | undefined> {
  const timeout = AbortSignal.timeout(call.timeoutMs);
  // Linked (not AbortSignal.any): the caller's signal may outlive many calls and must not keep a reference to each.
  const linked = linkSignals([call.signal, timeout]);
  try {
    return await send(call, timeout, linked.signal);
  } finally {
    linked.release();
  }
}

async function send<T extends z.ZodType>(call: JsonCall<T>, timeout: AbortSignal, signal: AbortSignal): Promise<z.output<T> | undefined> {
  const where = displayUrl(call.url);
  let res: Response;
  try {
    res = await fetch(call.url, {
      method: call.method,
      headers: { ...call.headers, ...(call.body !== undefined ? { "content-type": "application/json" } : {}) },
      body: call.body !== undefined ? JSON.stringify(call.body) : undefined,
      signal,
    });
  } catch (err) {
    if (call.signal?.aborted) throw new RemoteCallAborted(call.what);
    if (timeout.aborted) {
      throw new SandboxError(`${call.what} at ${where} did not answer within ${Math.round(call.timeoutMs / 1000)} s`, { code: "remote_timeout", details: { url: where } });
    }
    const code = causeCode(err);
    throw new SandboxError(`${call.what} at ${where} is unreachable${code ? ` (${code})` : ""}: check that it runs and that the URL is right`, {
      code: "remote_unreachable",
      details: { url: where, cause: code },
    });
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    if (call.signal?.aborted) throw new RemoteCallAborted(call.what);
    throw new SandboxError(`${call.what} at ${where} closed the connection mid-answer`, { code: "remote_unreachable", details: { url: where } });
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = { detail: text.slice(0, 200) };
  }
  if (call.okStatuses?.includes(res.status)) return undefined;
  if (!res.ok) throw remoteError(res.status, body, `${call.what} at ${where}`);
  const parsed = call.schema.safeParse(body);
  if (!parsed.success) {
    throw new SandboxError(`${call.what} at ${where} sent an answer this client does not understand (${parsed.error.issues[0]?.message ?? "invalid"})`, {
      code: "remote_protocol_error",
      details: { url: where },
    });
  }
  return parsed.data;
}
