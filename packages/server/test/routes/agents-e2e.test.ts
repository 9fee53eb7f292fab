/**
 * Custom agents end to end on a real gateway, the real lead agent and a
 * scripted OpenAI-compatible provider: a bootstrap run creates the agent, a
 * chat uses its soul, `update_agent` changes it for the next turn; and the
 * workspace-changes route reports what a run created, edited and deleted.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { HttpScriptStep, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(script: HttpScriptStep[]): Promise<{ url: string; llm: ScriptedLLMServer; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "agents-e2e-"));
  const llm = await startScriptedLLMServer({ script });
  const { config } = appConfigFromText(
    [
      "models:",
      "  - name: basic",
      "    use: openai-compatible",
      "    model: scripted",
      `    base_url: ${llm.url}/v1`,
      "    api_key: k",
      "  - name: smart",
      "    use: openai-compatible",
      "    model: scripted",
      `    base_url: ${llm.url}/v1`,
      "    api_key: k",
      "title:",
      "  enabled: false",
      "agents_api:",
      "  enabled: true",
      "sandbox:",
      "  use: local",
      "  allow_host_bash: true",
    ].join("\n"),
  );
  const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
  const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  cleanups.push(async () => {
    await gateway.close();
    await runtime.close();
    await llm.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { url, llm, dataDir };
}

const systemPrompt = (llm: ScriptedLLMServer, i: number): string => {
  const msgs = (llm.requests[i].body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return msgs.filter((m) => m.role === "system").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
};
const toolNames = (llm: ScriptedLLMServer, i: number): string[] => ((llm.requests[i].body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

async function run(url: string, threadId: string, text: string, context: Record<string, unknown>) {
  const res = await postJson(`${url}/api/threads/${threadId}/runs/wait`, { input: humanInput(text), context });
  expect(res.status).toBe(200);
  return (await res.json()) as { messages: Array<{ type: string; content: unknown; name?: string }> };
}

describe("custom agents end to end", () => {
  it("bootstrap creates the agent, a chat uses its soul and model, update_agent changes it for the next turn", async () => {
    const { url, llm } = await setup([
      { toolCalls: [{ name: "setup_agent", args: { soul: "You are Terse. Answer in five words.", description: "A terse helper" } }] },
      "Your agent terse is ready.",
      "Five words, as promised here.",
      { toolCalls: [{ name: "update_agent", args: { soul: "You are Terse v2. Answer in three words.", description: "Terser", model: "smart", skills: "null" } }] },
      "Updated myself.",
      "Three words now.",
    ]);
    await postJson(`${url}/api/threads`, { thread_id: "boot" });
    const boot = await run(url, "boot", "Create an agent named terse", { is_bootstrap: true, agent_name: "terse" });
    expect(toolNames(llm, 0)).toContain("setup_agent");
    expect(toolNames(llm, 0)).not.toContain("update_agent");
    expect(boot.messages.find((m) => m.type === "tool")?.content).toBe("Agent 'terse' created successfully!");
    const agent = (await (await fetch(`${url}/api/agents/terse`)).json()) as Record<string, unknown>;
    expect(agent).toMatchObject({ name: "terse", description: "A terse helper", soul: "You are Terse. Answer in five words." });

    await postJson(`${url}/api/threads`, { thread_id: "chat", metadata: { agent_name: "terse" } });
    await run(url, "chat", "hello", { agent_name: "terse" });
    expect(systemPrompt(llm, 2)).toContain("You are Terse. Answer in five words.");
    expect(toolNames(llm, 2)).toContain("update_agent");
    expect(toolNames(llm, 2)).not.toContain("setup_agent");

    const upd = await run(url, "chat", "be terser and use the smart model", { agent_name: "terse" });
    expect(String(upd.messages.filter((m) => m.type === "tool").at(-1)?.content)).toMatch(/^Agent 'terse' updated successfully\. Changed: description, model, soul\./);
    expect(await (await fetch(`${url}/api/agents/terse`)).json()).toMatchObject({ description: "Terser", model: "smart", soul: "You are Terse v2. Answer in three words." });

    await run(url, "chat", "again", { agent_name: "terse" });
    expect(systemPrompt(llm, 5)).toContain("You are Terse v2. Answer in three words.");
    expect(systemPrompt(llm, 5)).not.toContain("five words");
    // a default chat has neither agent tool
    expect(toolNames(llm, 0).includes("update_agent") || toolNames(llm, 5).includes("setup_agent")).toBe(false);
  });

  it("an edit through PUT /api/agents shows on the agent's next run", async () => {
    const { url, llm } = await setup(["first", "second", "third"]);
    expect((await postJson(`${url}/api/agents`, { name: "Poet", soul: "Speak in rhyme." })).status).toBe(201);
    await postJson(`${url}/api/threads`, { thread_id: "p1" });
    await run(url, "p1", "hi", { agent_name: "poet" });
    expect(systemPrompt(llm, 0)).toContain("Speak in rhyme.");
    await fetch(`${url}/api/agents/poet`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ soul: "Speak in haiku." }) });
    await run(url, "p1", "hi again", { agent_name: "poet" });
    expect(systemPrompt(llm, 1)).toContain("Speak in haiku.");
    // an assistant_id naming the agent selects it too, as in DeerFlow
    const res = await postJson(`${url}/api/threads/p1/runs/wait`, { assistant_id: "Poet", input: humanInput("by assistant id") });
    expect(res.status).toBe(200);
    expect(systemPrompt(llm, 2)).toContain("Speak in haiku.");
  });
});

describe("workspace changes of a real run", () => {
  it("reports the files a run created, edited and deleted, with unified diffs", async () => {
    const { url } = await setup([
      {
        toolCalls: [
          { name: "write_file", args: { description: "draft", path: "/mnt/user-data/outputs/report.md", content: "# Report\n\nline one\n" }, id: "c1" },
          { name: "write_file", args: { description: "scratch", path: "/mnt/user-data/workspace/scratch.txt", content: "temp\n" }, id: "c2" },
        ],
      },
      "Drafted.",
      { toolCalls: [{ name: "read_file", args: { description: "read", path: "/mnt/user-data/outputs/report.md" }, id: "c2b" }] },
      { toolCalls: [{ name: "str_replace", args: { description: "fix", path: "/mnt/user-data/outputs/report.md", old_str: "line one", new_str: "line 1\nline 2" }, id: "c3" }] },
      { toolCalls: [{ name: "bash", args: { description: "clean", command: "rm /mnt/user-data/workspace/scratch.txt" }, id: "c4" }] },
      { toolCalls: [{ name: "write_file", args: { description: "notes", path: "/mnt/user-data/workspace/notes.md", content: "n\n" }, id: "c5" }] },
      "Edited.",
    ]);
    await postJson(`${url}/api/threads`, { thread_id: "ws" });
    await run(url, "ws", "draft it", {});
    const edited = await run(url, "ws", "edit it", {});
    expect(edited.messages.filter((m) => m.type === "tool").some((m) => String(m.content).startsWith("Error"))).toBe(false);
    const runs = (await (await fetch(`${url}/api/threads/ws/runs`)).json()) as Array<{ run_id: string }>;
    const [second, first] = runs.map((r) => r.run_id);
    const changes = async (runId: string, q = "?include_files=true&include_diff=true") =>
      (await (await fetch(`${url}/api/threads/ws/runs/${runId}/workspace-changes${q}`)).json()) as {
        available: boolean;
        summary: Record<string, unknown>;
        files: Array<{ path: string; status: string; diff: string; root: string }>;
      };
    const a = await changes(first);
    expect(a.available).toBe(true);
    expect(a.files.map((f) => [f.path, f.status, f.root])).toEqual([
      ["/mnt/user-data/outputs/report.md", "created", "outputs"],
      ["/mnt/user-data/workspace/scratch.txt", "created", "workspace"],
    ]);
    const b = await changes(second);
    expect(b.summary).toMatchObject({ created: 1, modified: 1, deleted: 1 });
    const byPath = Object.fromEntries(b.files.map((f) => [f.path, f]));
    expect(byPath["/mnt/user-data/outputs/report.md"].status).toBe("modified");
    expect(byPath["/mnt/user-data/outputs/report.md"].diff).toContain("-line one\n+line 1\n+line 2");
    expect(byPath["/mnt/user-data/workspace/scratch.txt"].status).toBe("deleted");
    expect(byPath["/mnt/user-data/workspace/notes.md"].status).toBe("created");
    expect((await changes(second, "?include_diff=false")).files.every((f) => f.diff === "")).toBe(true);
    expect((await changes(second, "?include_files=false")).files).toEqual([]);
    expect((await changes("unknown-run")).available).toBe(false);
    expect((await fetch(`${url}/api/threads/ws/runs/${second}/workspace-changes?include_diff=maybe`)).status).toBe(422);
  });
});
