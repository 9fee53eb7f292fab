import { describe, expect, it } from "vitest";
import { redactSecretKeys, redactSecretText } from "../../src/persistence/redact";

describe("redactSecretKeys", () => {
  it("replaces secret-looking keys at any depth and copies the rest", () => {
    const input = {
      config: { configurable: { api_key: "sk-1", model_name: "m", nested: [{ Authorization: "Bearer x", ok: 1 }] } },
      context: { secrets: { GITHUB_TOKEN: "t" }, token_usage: { total: 3 } },
      password: "p",
    };
    const out = redactSecretKeys(input) as typeof input;
    expect(out).toEqual({
      config: { configurable: { api_key: "***", model_name: "m", nested: [{ Authorization: "***", ok: 1 }] } },
      context: { secrets: "***", token_usage: { total: 3 } },
      password: "***",
    });
    expect(out.config).not.toBe(input.config);
    expect(input.config.configurable.api_key).toBe("sk-1"); // the input is not changed
  });

  it("leaves scalars alone and stops descending past its depth limit", () => {
    expect(redactSecretKeys("api_key")).toBe("api_key");
    expect(redactSecretKeys(null)).toBeNull();
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 12; i++) deep = { next: deep };
    expect(JSON.stringify(redactSecretKeys(deep))).toBe(JSON.stringify(deep));
  });
});

describe("redactSecretText", () => {
  it("scrubs credential headers, bearer tokens, key shapes and query keys from free text", () => {
    expect(redactSecretText("Received headers: Authorization: Bearer abc.def-123, x-api-key: ant-key-42xyz, api-key: azure0123")).toBe(
      "Received headers: Authorization: Bearer [REDACTED], x-api-key: [REDACTED], api-key: [REDACTED]",
    );
    expect(redactSecretText('{"authorization":"Basic dXNlcjpwYXNz"}')).toBe('{"authorization":"Basic [REDACTED]"}');
    expect(redactSecretText("GET https://g.example/v1?key=AIzaSyA1234567890abcdefghij&alt=sse")).toBe("GET https://g.example/v1?key=[REDACTED]&alt=sse");
    expect(redactSecretText("token expired: bearer eyJhbGciOi.payload.sig")).toBe("token expired: bearer [REDACTED]");
    expect(redactSecretText("The API key sk-proj-ABCDEFGH12345678 is invalid")).toBe("The API key [REDACTED] is invalid");
    expect(redactSecretText("leaked my-own-secret-value here", ["my-own-secret-value"])).toBe("leaked [REDACTED] here");
  });

  it("leaves ordinary error texts unchanged", () => {
    for (const t of ["This model's maximum context length is 8192 tokens.", "Rate limit reached for requests. Please try again later.", "Incorrect API key provided: sk-abc***xyz."]) {
      expect(redactSecretText(t)).toBe(t);
    }
  });
});
