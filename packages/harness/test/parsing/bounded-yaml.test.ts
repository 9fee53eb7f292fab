import { describe, expect, it } from "vitest";
import { checkYamlLimits, countYamlNodes, DEFAULT_MAX_JSON_DEPTH, jsonDepth, ParseLimitError, parseYamlBounded } from "../../src/parsing";

const wide = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: v`).join("\n");

describe("bounded YAML parsing", () => {
  it("parses ordinary documents like the yaml package", () => {
    expect(parseYamlBounded("a: 1\nb: [x, y]\nc: {d: e}\n", "f.yaml")).toEqual({ a: 1, b: ["x", "y"], c: { d: "e" } });
    expect(parseYamlBounded("", "f.yaml")).toBeNull();
  });

  it("refuses a document over its byte limit before lexing it, naming file and limit", () => {
    const err = (() => {
      try {
        checkYamlLimits("x".repeat(2000), "big.yaml", { maxBytes: 1000, maxNodes: 10, maxAliasCount: 1 });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ParseLimitError);
    expect((err as ParseLimitError).code).toBe("parse_limit_exceeded");
    expect((err as ParseLimitError).message).toBe("big.yaml: YAML document is 2000 bytes, over the limit of 1000 bytes");
    expect((err as ParseLimitError).details).toMatchObject({ file: "big.yaml", limit: "max_bytes", max: 1000, actual: 2000 });
  });

  it("counts keys in block and flow style and refuses a wide mapping before composing it", () => {
    expect(countYamlNodes("a: 1\nb: 2\n")).toBe(4);
    expect(countYamlNodes(`{${Array.from({ length: 50 }, (_, i) => `k${i}: ${i}`).join(", ")}}`)).toBeGreaterThanOrEqual(100);
    const limits = { maxBytes: 1 << 20, maxNodes: 1000, maxAliasCount: 100 };
    // 100,000 keys: the composer alone would need seconds; the lexer pass stops at the limit.
    const text = wide(100_000);
    const t0 = performance.now();
    expect(() => parseYamlBounded(text, "wide.yaml", { ...limits, maxBytes: 4 << 20 })).toThrow(/wide\.yaml: YAML document has more than 1000 keys\/values/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("caps alias expansion (billion laughs) while the node count is small", () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 8; i++) lines.push(`l${i}: &l${i} [${Array(9).fill(i === 1 ? "*a" : `*l${i - 1}`).join(",")}]`);
    const text = lines.join("\n");
    expect(countYamlNodes(text)).toBeLessThan(200);
    expect(() => parseYamlBounded(text, "laughs.yaml")).toThrow(/alias/i);
  });
});

describe("JSON depth", () => {
  it("measures nesting outside strings in one pass", () => {
    expect(jsonDepth('{"a": [1, {"b": 2}]}')).toBe(3);
    expect(jsonDepth('{"a": "[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('{"a": "\\"[[["}')).toBe(1);
    expect(jsonDepth("[".repeat(1_000_000), DEFAULT_MAX_JSON_DEPTH)).toBe(DEFAULT_MAX_JSON_DEPTH + 1);
  });
});

describe("API-written YAML read back under the limits", () => {
  it("refuses a custom agent config.yaml with more nodes than the limit, quickly and naming the file", async () => {
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const { loadCustomAgent, userAgentDir } = await import("../../src/agents");
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "agent-yaml-"));
    try {
      const dir = userAgentDir(base, "u", "wide");
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, "config.yaml"), `name: wide\nskills:\n${Array.from({ length: 20_000 }, (_, i) => `  - s${i}`).join("\n")}\n`);
      const t0 = performance.now();
      expect(() => loadCustomAgent(base, "u", "wide")).toThrow(/config\.yaml: invalid YAML \(.*config\.yaml: YAML document has more than 5000 keys\/values/);
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
