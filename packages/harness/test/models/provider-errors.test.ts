import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { ModelCallError } from "../../src/errors";
import { toModelCallError } from "../../src/models";

const KEY = "sk-live-0123456789abcdef";

describe("toModelCallError scrubs credentials", () => {
  it("redacts an echoed Authorization header from the message and keeps no raw provider error as cause", () => {
    const body = JSON.stringify({ error: { message: `Bad request; got Authorization: Bearer ${KEY}`, type: "invalid_request_error", code: null } });
    const raw = new APICallError({ message: "Bad request", url: `http://127.0.0.1:1/v1?api_key=${KEY}`, requestBodyValues: { messages: ["secret prompt"] }, statusCode: 400, responseBody: body, responseHeaders: {} });
    const err = toModelCallError(raw, { provider: "openai", model: "gpt" });
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.kind).toBe("bad_request");
    expect(err.status).toBe(400);
    expect(err.message).toBe('openai model "gpt" call failed (HTTP 400): Bad request; got Authorization: Bearer [REDACTED]');
    const cause = err.cause as Error & { statusCode?: number; responseBody?: unknown; requestBodyValues?: unknown };
    expect(cause.statusCode).toBe(400);
    expect(cause.responseBody).toBeUndefined();
    expect(cause.requestBodyValues).toBeUndefined();
    expect(JSON.stringify({ m: err.message, c: cause.message, s: String(err.stack) })).not.toContain(KEY.slice(3));
  });

  it("scrubs a known key value given by the caller and a network error's text, keeping its code", () => {
    const net = Object.assign(new Error(`connect ECONNREFUSED while sending x-api-key=${"k".repeat(4)}-${KEY}`), { cause: { code: "ECONNREFUSED", message: "refused" } });
    const err = toModelCallError(net, { provider: "anthropic", model: "claude", secrets: [KEY] });
    expect(err.kind).toBe("connection");
    expect(err.message).not.toContain(KEY.slice(3));
    expect(((err.cause as Error).cause as { code?: string }).code).toBe("ECONNREFUSED");
  });
});
