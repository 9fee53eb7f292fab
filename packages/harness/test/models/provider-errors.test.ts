import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { ModelCallError } from "../../src/errors";
import { humanMessage } from "../../src/messages";
import { collectModelStream, createChatModel, toModelCallError } from "../../src/models";
import { startScriptedLLMServer } from "../../src/testing/scripted-http";
import { configWithModels } from "./helpers";

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

describe("a configured model's own credentials", () => {
  it("are scrubbed from its errors whatever shape they have (a gateway key echoed in prose, a custom auth header)", async () => {
    // neither value has a recognisable key shape, and the proxy quotes them without a header name
    const key = "corp-gateway-7Q2mX9vL4kT8pR1z";
    const header = "tenant-secret-5Hs8Kd2Lq9Wz";
    const server = await startScriptedLLMServer({ script: [{ fault: "bad_request", message: `Key ${key} is not valid for tenant ${header}.` }] });
    try {
      const entry = `  - name: m\n    use: openai-compatible\n    model: scripted\n    api_key: ${key}\n    base_url: ${server.url}/v1\n    default_headers:\n      X-Tenant-Auth: ${header}\n`;
      const { model } = createChatModel(configWithModels(entry), "m", { thinkingEnabled: false });
      const err = await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [] })).then(
        () => undefined,
        (e: unknown) => e as ModelCallError,
      );
      expect(err).toBeInstanceOf(ModelCallError);
      expect(err!.message).toContain("is not valid for tenant");
      const text = JSON.stringify({ m: err!.message, c: (err!.cause as Error).message, s: String(err!.stack) });
      expect(text).not.toContain(key);
      expect(text).not.toContain(header);
    } finally {
      await server.close();
    }
  });
});
