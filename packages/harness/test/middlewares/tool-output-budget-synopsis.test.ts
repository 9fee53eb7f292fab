import { describe, expect, it } from "vitest";
import { buildToolOutputSynopsis } from "../../src/middlewares/tool-output-budget-synopsis";

/** A block mapping of `n` keys: what an MCP tool result or a generated file read back can be. */
function wideYaml(n: number): string {
  const lines = ["---"];
  for (let i = 0; i < n; i++) lines.push(`k${i}: v`);
  return lines.join("\n");
}

describe("YAML synopsis of an oversized tool output", () => {
  it("summarises an ordinary YAML document", () => {
    const s = buildToolOutputSynopsis("---\nname: demo\nitems:\n  - a\n  - b\nnested:\n  x: 1\n");
    expect(s.kind).toBe("yaml");
    expect(s.summary[0]).toContain("3 top-level keys");
  });

  it("does not compose a mapping of 25,000 keys (parse time grows with the square of its width and would hold the event loop for many seconds)", () => {
    const text = wideYaml(25_000);
    const started = performance.now();
    const s = buildToolOutputSynopsis(text, "mcp_read");
    const elapsed = performance.now() - started;
    // the node cap is measured by a linear lexer pass: the document is described as text instead
    expect(s.kind).not.toBe("yaml");
    expect(elapsed).toBeLessThan(2000);
  });
});
