import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "../../harness/src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../harness/src/testing/scripted-http";
import { runCli, tempDir } from "./helpers";

describe("deerflow run --subagents (real lead agent, scripted HTTP model)", { timeout: 60_000 }, () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  it("offers task only with --subagents and prints nested sub-agent progress lines", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "config.yaml"),
      ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: k", `    base_url: ${server.url}/v1`, "sandbox:", "  use: local", ""].join("\n"),
    );
    // lead: delegate → child: answer → lead: final answer (one sub-agent, so the order is fixed)
    server.push(
      { toolCalls: [{ name: "task", args: { description: "count deer", prompt: "Count the deer species", subagent_type: "researcher" } }] } as never,
      { text: "There are 55 species.", usage: { input_tokens: 8, output_tokens: 6 } } as never,
      "The sub-agent found 55 species.",
    );
    const before = server.requests.length;
    const r = await runCli(["run", "How many deer species?", "--subagents"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines).toContain('    ⇢ sub-agent "count deer" started (scripted)');
    expect(lines.some((l) => /^ {4}│ count deer #1: There are 55 species\.$/.test(l))).toBe(true);
    expect(lines).toContain("    ✓ count deer: completed · 14 tokens");
    expect(r.stdout).toContain("The sub-agent found 55 species.");
    const leadTools = JSON.stringify((server.requests[before].body as { tools?: unknown }).tools ?? []);
    expect(leadTools).toContain('"task"');
    const childBody = JSON.stringify(server.requests[before + 1].body);
    expect(childBody).toContain("You are a research sub-agent.");
    expect(childBody).not.toContain('"name":"task"');

    server.push("No delegation here.");
    const plainAt = server.requests.length;
    const plain = await runCli(["run", "Hi"], { cwd: dir });
    expect(plain.code).toBe(0);
    expect(JSON.stringify((server.requests[plainAt].body as { tools?: unknown }).tools ?? [])).not.toContain('"task"');
  });
});
