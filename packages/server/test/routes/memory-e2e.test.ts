/**
 * Memory end to end on a real gateway, the real lead agent and a scripted
 * OpenAI-compatible provider playing both the chat model and the updater: a
 * run teaches a fact, `GET /api/memory` shows it after the queue is flushed,
 * the next thread's model call carries it in `<memory>`, and the per-user
 * off switch stops injection.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { RecordedLLMRequest } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const bodyText = (r: RecordedLLMRequest) => JSON.stringify(r.body ?? {});
const isUpdater = (r: RecordedLLMRequest) => bodyText(r).includes("long-term memory of an assistant");
const UPDATE = JSON.stringify({
  user: { workContext: { summary: "Backend engineer who ships Go services.", shouldUpdate: true, scope: "user", authority: "descriptive" } },
  history: {},
  newFacts: [{ content: "User deploys with Nomad, not Kubernetes", category: "preference", confidence: 0.93, scope: "user", durability: "durable", authority: "descriptive" }],
});

describe("memory through the gateway (real HTTP, lead agent, scripted provider)", () => {
  it("learns from a run, serves it on /api/memory, injects it in the next thread, honours the off switch", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "memory-e2e-"));
    const llm = await startScriptedLLMServer({ script: [(rec) => (isUpdater(rec) ? { text: UPDATE } : { text: "Understood." })], onExhausted: "repeat-last" });
    const { config } = appConfigFromText(
      ["models:", "  - name: basic", "    use: openai-compatible", "    model: scripted", `    base_url: ${llm.url}/v1`, "    api_key: k", "title:", "  enabled: false", "sandbox:", "  use: local", "memory:", "  debounce_seconds: 0.05", ""].join("\n"),
    );
    const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
    const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
    cleanups.push(async () => {
      await gateway.close();
      await runtime.close();
      await llm.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const api = `${url}/api`;
    const run = async (threadId: string, text: string) => {
      await postJson(`${api}/threads`, { thread_id: threadId });
      return postJson(`${api}/threads/${threadId}/runs/wait`, { input: humanInput(text) });
    };
    expect((await run("t1", "We deploy with Nomad, I prefer it over Kubernetes")).status).toBe(200);
    await runtime.extensions.memory!.flush();
    const mem = (await (await fetch(`${api}/memory`)).json()) as { facts: Array<{ content: string; source: string }>; user: { workContext: { summary: string } } };
    expect(mem.facts.map((f) => [f.content, f.source])).toEqual([["User deploys with Nomad, not Kubernetes", "t1"]]);
    expect(mem.user.workContext.summary).toBe("Backend engineer who ships Go services.");

    await run("t2", "How should I deploy the new service: Nomad or Kubernetes?");
    const chat = llm.requests.filter((r) => !isUpdater(r)).at(-1)!;
    expect(bodyText(chat)).toContain("User deploys with Nomad, not Kubernetes");
    expect(bodyText(chat)).toContain("<memory>");

    expect((await fetch(`${api}/memory/settings`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ enabled: false }) })).status).toBe(200);
    await run("t3", "Remind me how we deploy services?");
    expect(bodyText(llm.requests.filter((r) => !isUpdater(r)).at(-1)!)).not.toContain("Nomad, not Kubernetes");
  }, 30_000);
});
