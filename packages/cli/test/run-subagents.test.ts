import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "@deerflow-ts/harness/client";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
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

  it("prints and reports the run record's token total (lead + sub-agent + middleware) with the split", async () => {
    const dir = tempDir();
    const configPath = path.join(dir, "config.yaml");
    writeFileSync(
      configPath,
      ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: k", `    base_url: ${server.url}/v1`, "sandbox:", "  use: local", ""].join("\n"),
    );
    // every call has known usage: the lead's two (10+5, 40+20), the sub-agent's one (70+30 = 100)
    const script = () =>
      server.push(
        { toolCalls: [{ name: "task", args: { description: "count deer", prompt: "Count the deer species", subagent_type: "researcher" } }], usage: { input_tokens: 10, output_tokens: 5 } } as never,
        { text: "There are 55 species.", usage: { input_tokens: 70, output_tokens: 30 } } as never,
        { text: "The sub-agent found 55 species.", usage: { input_tokens: 40, output_tokens: 20 } } as never,
      );
    script();
    const r = await runCli(["run", "How many deer species?", "--subagents", "--json"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const end = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { thread_id: string; usage: { total_tokens: number; input_tokens: number; output_tokens: number; by_caller: Record<string, number> } };

    // the run record, read the way the gateway's token-usage route reads it
    const client = new DeerFlowClient({ configPath, dataDir: path.join(dir, ".deer-flow"), cwd: dir });
    try {
      const runs = await (await client.persistence()).runs.listByThread(end.thread_id);
      expect(runs).toHaveLength(1);
      const rec = runs[0].usage;
      expect(rec.subagentTokens).toBe(100);
      expect(rec.leadAgentTokens).toBeGreaterThanOrEqual(75);
      expect(rec.totalTokens).toBe(rec.leadAgentTokens + rec.subagentTokens + rec.middlewareTokens);
      expect(end.usage).toEqual({
        input_tokens: rec.totalInputTokens,
        output_tokens: rec.totalOutputTokens,
        total_tokens: rec.totalTokens,
        by_caller: { lead_agent: rec.leadAgentTokens, subagent: 100, middleware: rec.middlewareTokens },
      });
    } finally {
      await client.close();
    }

    // the human-readable line says the same totals
    script();
    const text = await runCli(["run", "How many deer species?", "--subagents"], { cwd: dir });
    expect(text.code).toBe(0);
    const line = text.stdout.split("\n").find((l) => l.startsWith("tokens: "));
    expect(line).toBe(`tokens: ${end.usage.total_tokens} (${end.usage.input_tokens} in / ${end.usage.output_tokens} out) · lead ${end.usage.by_caller.lead_agent} · sub-agents 100 · middleware ${end.usage.by_caller.middleware} · thread ${line!.split(" · thread ")[1]}`);
  });
});
