import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, SCRIPTED_AGENT, tempDir } from "./helpers";

function scriptedConfig(dir: string, baseUrl: string): string {
  const file = path.join(dir, "config.yaml");
  writeFileSync(
    file,
    // memory off: its updater runs when the CLI exits and would take the scripted server's next reply.
    ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: $SCRIPTED_KEY", `    base_url: ${baseUrl}`, "sandbox:", "  use: local", "memory:", "  enabled: false", ""].join("\n"),
  );
  writeFileSync(path.join(dir, ".env"), "SCRIPTED_KEY=test-key\n");
  return file;
}

describe("deerflow run (against the scripted HTTP server)", { timeout: 60_000 }, () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  it("streams the answer to stdout and exits 0", async () => {
    const dir = tempDir();
    scriptedConfig(dir, `${server.url}/v1`);
    server.push({ text: "Deer can run at sixty kilometres per hour.", usage: { input_tokens: 12, output_tokens: 9 } } as never);
    const r = await runCli(["run", "How fast are deer?"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Deer can run at sixty kilometres per hour.");
    expect(r.stdout).toMatch(/tokens: 21 \(12 in \/ 9 out\) · lead 21 · sub-agents 0 · middleware 0 · thread /);
    // the request really went to the server, with the key from .env
    const last = server.requests.at(-1)!;
    expect(JSON.stringify(last.body)).toContain("How fast are deer?");
    expect(existsSync(path.join(dir, ".deer-flow", "data", "deerflow.db"))).toBe(true);
  });

  it("--files uploads the files and tells the model about them in the first request (<current_uploads>)", async () => {
    const dir = tempDir();
    scriptedConfig(dir, `${server.url}/v1`);
    writeFileSync(path.join(dir, "sales.csv"), "region,amount\nnorth,10\n");
    server.push("I read the upload.");
    const before = server.requests.length;
    const r = await runCli(["run", "Summarise the sales", "--files", "sales.csv"], { cwd: dir });
    expect(r.code).toBe(0);
    const threadId = /thread (\S+)/.exec(r.stdout)![1];
    expect(r.stdout).toContain("Uploaded sales.csv → /mnt/user-data/uploads/sales.csv");
    const first = JSON.stringify(server.requests[before].body);
    expect(first).toContain("<current_uploads>");
    expect(first).toContain("/mnt/user-data/uploads/sales.csv");
    expect(first).toContain("Summarise the sales");
    expect(existsSync(path.join(dir, ".deer-flow", "users", "default", "threads", threadId, "user-data", "uploads", "sales.csv"))).toBe(true);
  });

  it("--json prints one parseable event per line, token deltas, and a final end line; --thread continues", async () => {
    const dir = tempDir();
    scriptedConfig(dir, `${server.url}/v1`);
    server.push("First reply here.", "Second reply with more words.");
    const r1 = await runCli(["run", "one", "--json"], { cwd: dir });
    expect(r1.code).toBe(0);
    const lines = r1.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const deltas = lines.filter((l) => l.type === "messages-tuple" && l.data.type === "ai" && l.data.content);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.data.content).join("")).toBe("First reply here.");
    expect(lines.at(-1)).toEqual({ type: "end", thread_id: expect.any(String), text: "First reply here.", artifacts: [], usage: expect.objectContaining({ total_tokens: expect.any(Number) }) });
    const r2 = await runCli(["run", "two", "--json", "--thread", lines.at(-1).thread_id], { cwd: dir });
    const end = JSON.parse(r2.stdout.trim().split("\n").at(-1)!);
    expect(end.text).toBe("Second reply with more words.");
    const body = JSON.stringify(server.requests.at(-1)!.body);
    expect(body).toContain("First reply here."); // history was sent back to the model
  });

  it("fails with a non-zero exit code and the reason when the provider rejects the key", async () => {
    const dir = tempDir();
    scriptedConfig(dir, `${server.url}/v1`);
    server.push({ fault: "unauthorized" } as never);
    const r = await runCli(["run", "hello", "--json"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Run failed: .*(401|auth|key|Unauthorized)/is);
    const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    expect(last.type).toBe("error");
  });

  it("names the missing env var and the fix", async () => {
    const dir = tempDir();
    scriptedConfig(dir, `${server.url}/v1`);
    writeFileSync(path.join(dir, ".env"), "");
    const r = await runCli(["run", "hello"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SCRIPTED_KEY");
    expect(r.stderr).toContain("models[0].api_key");
    expect(r.stderr).toMatch(/Fix: /);
  });
});

describe("deerflow run (injected scripted agent)", { timeout: 60_000 }, () => {
  it("shows tool progress, lists produced artifacts with host paths, uploads --files", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "data.csv"), "a,b\n1,2\n");
    const env = cleanEnv({
      DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT,
      DEERFLOW_TEST_SCRIPT: JSON.stringify([
        { text: "Writing the report.", toolCalls: [{ name: "write_output", args: { path: "report.md", content: "# Report\n" } }] },
        "Done: the report is in outputs.",
      ]),
    });
    const r = await runCli(["run", "make a report", "--files", "data.csv", "--data-dir", "store"], { cwd: dir, env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const threadId = /thread (\S+)/.exec(r.stdout)![1];
    expect(r.stdout).toContain("Uploaded data.csv → /mnt/user-data/uploads/data.csv");
    expect(r.stdout).toMatch(/→ write_output\(path="report.md"/);
    expect(r.stdout).toMatch(/✓ write_output: OK: wrote/);
    expect(r.stdout).toContain("Done: the report is in outputs.");
    const host = path.join(dir, "store", "users", "default", "threads", threadId, "user-data", "outputs", "report.md");
    expect(r.stdout).toContain("Artifacts:");
    expect(r.stdout).toContain(`/mnt/user-data/outputs/report.md  ${host}`);
    expect(readFileSync(host, "utf8")).toBe("# Report\n");
    expect(existsSync(path.join(dir, "store", "users", "default", "threads", threadId, "user-data", "uploads", "data.csv"))).toBe(true);
    // no spinner escape codes when stdout is not a TTY
    expect(r.stdout).not.toMatch(/\u001b|⠋/);

    const j = await runCli(["run", "again", "--json", "--data-dir", "store"], { cwd: dir, env });
    const end = JSON.parse(j.stdout.trim().split("\n").at(-1)!);
    expect(end).toMatchObject({ type: "end", thread_id: expect.any(String), text: "Done: the report is in outputs.", artifacts: ["/mnt/user-data/outputs/report.md"] });
  });

  it("rejects bad usage with exit code 2 and a hint", async () => {
    const dir = tempDir();
    const r = await runCli(["run", "--bogus"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/deerflow run: .*bogus/);
    expect(r.stderr).toContain('Run "deerflow run --help"');
  });
});
