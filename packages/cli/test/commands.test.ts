import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DeerFlowClient } from "@deerflow-ts/harness/client";
import { parseAppConfigText } from "@deerflow-ts/harness/config";
import { cleanEnv, EXAMPLE_CONFIG, HAS_EXAMPLE_CONFIG, runCli, SCRIPTED_AGENT, startCli, stopChild, tempDir } from "./helpers";

describe("deerflow --help and errors", { timeout: 60_000 }, () => {
  it("prints help for every command and rejects unknown commands", async () => {
    const dir = tempDir();
    const top = await runCli(["--help"], { cwd: dir });
    expect(top.code).toBe(0);
    for (const c of ["init", "doctor", "run", "chat", "serve", "config upgrade", "users", "scripted-llm"]) expect(top.stdout).toContain(c);
    const commands = ["run", "chat", "init", "doctor", "serve", "config", "users", "scripted-llm"];
    const results = await Promise.all(commands.map((c) => runCli([c, "--help"], { cwd: dir })));
    for (const [i, c] of commands.entries()) {
      const r = results[i];
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toMatch(/Usage: deerflow /);
      if (c !== "scripted-llm") expect(r.stdout, c).toContain("--data-dir PATH");
    }
    const bad = await runCli(["frobnicate"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Unknown command 'frobnicate'");
  }, 120_000);
});

describe.skipIf(!HAS_EXAMPLE_CONFIG)("deerflow config upgrade", { timeout: 60_000 }, () => {
  it("merges new default keys into an old config, keeping the user's values, with a backup", async () => {
    const dir = tempDir();
    const file = path.join(dir, "config.yaml");
    const old = "# my config\nconfig_version: 3\nmodels:\n  - name: mine\n    use: openai\n    model: gpt-x\n    api_key: $K\nsandbox:\n  use: local\n";
    writeFileSync(file, old);
    const r = await runCli(["config", "upgrade", "--example", EXAMPLE_CONFIG], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/config_version 3 → 34; \d+ key\(s\) added/);
    const text = readFileSync(file, "utf8");
    expect(text).toContain("# my config");
    expect(readFileSync(`${file}.bak`, "utf8")).toBe(old);
    const parsed = parseAppConfigText(text, { env: { K: "x" } }).config;
    expect(parsed.config_version).toBe(34);
    expect(parsed.models.map((m) => m.name)).toEqual(["mine"]);
    const again = await runCli(["config", "upgrade", "--example", EXAMPLE_CONFIG], { cwd: dir });
    expect(again.stdout).toContain("is up to date");
  });
});

describe("deerflow scripted-llm", { timeout: 60_000 }, () => {
  it("starts the scripted server and prints its URL", async () => {
    const dir = tempDir();
    const { child, match } = await startCli(["scripted-llm", "--port", "0", "--quiet"], { cwd: dir, ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/ });
    try {
      const res = await fetch(`${match[1]}/v1/models`);
      expect(res.status).toBe(200);
    } finally {
      await stopChild(child);
    }
  });
});

describe("deerflow serve", { timeout: 60_000 }, () => {
  it("starts the gateway, prints the URL, and answers with the same JSON as the embedded client", async () => {
    const dir = tempDir();
    const cfg = path.join(dir, "config.yaml");
    writeFileSync(
      cfg,
      "config_version: 34\nmodels:\n  - name: m1\n    display_name: Model One\n    use: openai\n    model: gpt-x\n    api_key: $DF_SERVE_KEY\n    supports_thinking: true\nsandbox:\n  use: local\n",
    );
    writeFileSync(path.join(dir, ".env"), "DF_SERVE_KEY=k\n");
    writeFileSync(path.join(dir, "notes.txt"), "some notes");
    const env = cleanEnv({ DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT, DEERFLOW_TEST_SCRIPT: "[]" });
    const { child, match } = await startCli(["serve", "--port", "0", "--data-dir", "data"], { cwd: dir, env, ready: /DeerFlow is running at (http:\/\/\S+)/ });
    try {
      const url = match[1];
      process.env.DF_SERVE_KEY = "k";
      const client = new DeerFlowClient({ configPath: cfg, dataDir: path.join(dir, "data"), cwd: dir });
      const models = await (await fetch(`${url}/api/models`)).json();
      expect(models).toEqual(client.listModels());

      // upload through the gateway, read the same files through the client (and the other way round)
      const form = new FormData();
      form.append("files", new Blob([readFileSync(path.join(dir, "notes.txt"))]), "notes.txt");
      const up = await (await fetch(`${url}/api/threads/t-srv/uploads`, { method: "POST", body: form })).json();
      const mine = await client.uploadFiles("t-cli", [path.join(dir, "notes.txt")]);
      expect(Object.keys(up).sort()).toEqual(Object.keys(mine).sort());
      expect(Object.keys(up.files[0]).sort()).toEqual(Object.keys(mine.files[0]).sort());
      for (const tid of ["t-srv", "t-cli"]) {
        const viaGateway = await (await fetch(`${url}/api/threads/${tid}/uploads/list`)).json();
        expect(viaGateway).toEqual(await client.listUploads(tid));
      }
      const art = await fetch(`${url}/api/threads/t-cli/artifacts/mnt/user-data/uploads/notes.txt`);
      const viaClient = await client.getArtifact("t-cli", "/mnt/user-data/uploads/notes.txt");
      expect(Buffer.from(await art.arrayBuffer())).toEqual(viaClient.bytes);
      expect(art.headers.get("content-type")).toContain(viaClient.mimeType);
      await client.close();
    } finally {
      await stopChild(child);
    }
    expect(existsSync(path.join(dir, "data"))).toBe(true);
  });
});
