import { describe, expect, it } from "vitest";
import { redactSecretKeys } from "../../src/persistence/redact";

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
