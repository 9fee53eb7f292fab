import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowRuntime } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

function configText(baseUrl: string, models: string[]): string {
  const lines = ["models:"];
  for (const name of models) lines.push(`  - { name: ${name}, use: openai-compatible, model: ${name}-id, base_url: "${baseUrl}", api_key: k }`);
  lines.push("sandbox:", "  use: local", "");
  return lines.join("\n");
}

/** A later mtime than the file has, so the change is seen even on coarse-mtime filesystems. */
function bumpMtime(file: string): void {
  const t = new Date(fs.statSync(file).mtimeMs + 2000);
  fs.utimesSync(file, t, t);
}

describe("config edits apply to the next run without a restart", () => {
  let llm: ScriptedLLMServer;
  beforeAll(async () => {
    llm = await startScriptedLLMServer({ script: [], onExhausted: "echo" });
  });
  afterAll(async () => llm.close());

  it("a new model shows in /api/models and serves the next run; a broken edit keeps the last good config and says why", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-reload-"));
    const file = path.join(dir, "config.yaml");
    fs.writeFileSync(file, configText(`${llm.url}/v1`, ["first"]));
    const logs: string[] = [];
    const runtime = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, ".deer-flow"), log: (m) => logs.push(m) });
    const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
    try {
      const names = async () => ((await (await fetch(`${url}/api/models`)).json()) as { models: Array<{ name: string }> }).models.map((m) => m.name);
      expect(await names()).toEqual(["first"]);
      const tid = ((await (await postJson(`${url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
      await (await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("one") })).json();
      expect((llm.requests.at(-1)!.body as { model: string }).model).toBe("first-id");

      fs.writeFileSync(file, configText(`${llm.url}/v1`, ["second", "first"]));
      bumpMtime(file);
      expect(await names()).toEqual(["second", "first"]);
      await (await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("two") })).json();
      expect((llm.requests.at(-1)!.body as { model: string }).model).toBe("second-id");

      fs.writeFileSync(file, "models: [ this is: not yaml");
      bumpMtime(file);
      expect(await names()).toEqual(["second", "first"]);
      expect(runtime.configError()?.message).toBeTruthy();
      expect(logs.some((l) => l.includes("keeping the last good config"))).toBe(true);
      const r = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("three") });
      expect(r.status).toBe(200);
    } finally {
      await gateway.close();
      await runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
