import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, tempDir } from "./helpers";

/** A project directory with a config.yaml whose one model talks to the scripted server. */
function project(baseUrl: string, extra: string[] = []): string {
  const dir = tempDir("df-first-run-");
  writeFileSync(
    path.join(dir, "config.yaml"),
    ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: test-key", `    base_url: ${baseUrl}`, "sandbox:", "  use: local", "memory:", "  enabled: false", ...extra, ""].join("\n"),
  );
  return dir;
}

describe("first run: every mistake is reported before anything starts", { timeout: 90_000 }, () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  it("without a config, run prints no thread id and chat fails before the prompt (also on empty stdin)", async () => {
    const dir = tempDir("df-first-run-");
    const run = await runCli(["run", "hello"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("No config.yaml found");
    const chat = await runCli(["chat"], { cwd: dir, input: "" });
    expect(chat.code).toBe(1);
    expect(chat.stdout).not.toContain("DeerFlow chat");
    expect(chat.stderr).toContain("No config.yaml found");
    expect(chat.stderr).toContain("Fix: Run `deerflow init`");
  });

  it("a config without models fails run and chat up front, naming models:", async () => {
    const dir = tempDir("df-first-run-");
    writeFileSync(path.join(dir, "config.yaml"), "config_version: 34\nmodels: []\nsandbox:\n  use: local\n");
    const run = await runCli(["run", "hello"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("No chat models are configured");
    const chat = await runCli(["chat"], { cwd: dir, input: "" });
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain("No chat models are configured");
  });

  it("an unknown --model is an error listing the configured models, and nothing is sent", async () => {
    const dir = project(`${server.url}/v1`);
    const before = server.requests.length;
    const r = await runCli(["run", "hello", "--model", "gpt-nope"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('Model "gpt-nope" is not configured. Configured models: scripted');
    const chat = await runCli(["chat", "--model", "gpt-nope"], { cwd: dir, input: "hi\n" });
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain("Configured models: scripted");
    expect(server.requests.length).toBe(before);
  });

  it("data lives beside the config that was found: a subdirectory continues the same thread; an unknown --thread is an error", async () => {
    const dir = project(`${server.url}/v1`);
    const sub = path.join(dir, "notes");
    mkdirSync(sub);
    server.push("The first answer.", "The second answer.");
    const first = await runCli(["run", "first question", "--json"], { cwd: dir });
    expect(first.code).toBe(0);
    const threadId = JSON.parse(first.stdout.trim().split("\n").at(-1)!).thread_id as string;
    const listed = await runCli(["threads"], { cwd: sub });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(threadId);
    const second = await runCli(["run", "second question", "--thread", threadId], { cwd: sub });
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("The second answer.");
    // the model saw the first turn: the thread was continued, not started anew
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain("The first answer.");
    expect(existsSync(path.join(sub, ".deer-flow"))).toBe(false);
    expect(existsSync(path.join(dir, ".deer-flow", "data", "deerflow.db"))).toBe(true);

    const before = server.requests.length;
    const unknown = await runCli(["run", "hello", "--thread", "no-such-thread"], { cwd: sub });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain(`Thread no-such-thread not found in ${path.join(dir, ".deer-flow")}`);
    expect(unknown.stderr).toContain("`deerflow threads`");
    expect(server.requests.length).toBe(before);
  });

  it("DEER_FLOW_HOME is the data dir when set", async () => {
    const dir = project(`${server.url}/v1`);
    const home = path.join(tempDir("df-home-"), "home");
    server.push("At home.");
    const r = await runCli(["run", "hello"], { cwd: dir, env: cleanEnv({ DEER_FLOW_HOME: home }) });
    expect(r.code).toBe(0);
    expect(existsSync(path.join(home, "data", "deerflow.db"))).toBe(true);
    expect(existsSync(path.join(dir, ".deer-flow"))).toBe(false);
  });

  it("--files with a missing file names it (no raw ENOENT), before a thread is made", async () => {
    const dir = project(`${server.url}/v1`);
    const r = await runCli(["run", "read it", "--files", "missing.csv"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`--files: ${path.join(dir, "missing.csv")} does not exist.`);
    expect(r.stderr).toContain("Fix: ");
    expect(r.stderr).not.toContain("ENOENT");
  });

  it("a broken extensions_config.json: the fix names that file and the line, not config.yaml", async () => {
    const dir = project(`${server.url}/v1`);
    writeFileSync(path.join(dir, "extensions_config.json"), '{"mcpServers": {\n');
    const r = await runCli(["run", "hello"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`Fix: Fix the syntax of ${path.join(dir, "extensions_config.json")} at line 2`);
    expect(r.stderr).not.toContain("Fix config.yaml");
  });

  it("a dead local model server: one quick retry, then an error naming its base_url and deerflow doctor", async () => {
    const free = net.createServer();
    await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
    const port = (free.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const dir = project(`http://127.0.0.1:${port}/v1`);
    const r = await runCli(["run", "hello", "--json"], { cwd: dir });
    expect(r.code).toBe(1);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; data?: { type?: string; content?: string } });
    const retries = events.filter((e) => e.type === "custom" && e.data?.type === "llm_retry");
    expect(retries).toHaveLength(1);
    const answer = events.filter((e) => e.type === "messages-tuple" && e.data?.type === "ai").map((e) => e.data!.content).join("");
    expect(answer).toContain(`http://127.0.0.1:${port}/v1`);
    expect(answer).toContain("deerflow doctor");
    expect(answer).not.toContain("temporarily unavailable");
    expect(r.stderr).toContain(`the model server at http://127.0.0.1:${port}/v1 refused the connection`);
    expect(r.stderr).toContain("Fix: Start the model server");
    expect(r.stdout + r.stderr).not.toContain("ECONNREFUSED");
  });

  it("scripted-llm on a busy port says which port and what to do (no raw EADDRINUSE)", async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const r = await runCli(["scripted-llm", "--port", String(port)], { cwd: tempDir() });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Cannot listen on 127.0.0.1:${port}.`);
      expect(r.stderr).toContain(`Fix: Port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain("--port 0");
      expect(r.stderr).not.toContain("EADDRINUSE");
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});
