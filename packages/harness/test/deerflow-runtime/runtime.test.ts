import { getEventListeners } from "node:events";
import { mkdtempSync, existsSync, mkdirSync, writeFileSync, utimesSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import type { FinishedRun, RunSettings } from "../../src/deerflow-runtime";
import { ConfigError } from "../../src/errors";
import { humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { threadPaths } from "../../src/uploads";

const open: DeerFlowRuntime[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), "df-runtime-"));
}

const CONFIG = ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", "  use: local", ""].join("\n");

function scriptedModelFactory(model: ScriptedModel) {
  return () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never });
}

describe("DeerFlowRuntime", () => {
  it("refuses to open without a config unless an agent factory is injected, with the actionable error", async () => {
    const dir = tmp();
    await expect(DeerFlowRuntime.open({ cwd: dir, dataDir: path.join(dir, "d") })).rejects.toThrow(ConfigError);
    const rt = await DeerFlowRuntime.open({ cwd: dir, dataDir: path.join(dir, "d"), allowMissingConfig: true, log: () => undefined });
    open.push(rt);
    await expect(rt.buildAgent({})).rejects.toThrow(/deerflow init/);
  });

  it("caches agents per settings and rebuilds them after a config edit", async () => {
    const dir = tmp();
    const file = path.join(dir, "config.yaml");
    writeFileSync(file, CONFIG);
    const rt = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "d"), modelFactory: scriptedModelFactory(new ScriptedModel(["x"])), log: () => undefined });
    open.push(rt);
    const a = await rt.buildAgent({ userId: "u1", threadId: "t1" });
    expect(await rt.buildAgent({ userId: "u1", threadId: "t2" })).toBe(a);
    expect(await rt.buildAgent({ userId: "u1", isPlanMode: true })).not.toBe(a);
    writeFileSync(file, CONFIG.replace("m1", "m2"));
    const t = new Date(statSync(file).mtimeMs + 2000);
    utimesSync(file, t, t);
    expect(await rt.buildAgent({ userId: "u1" })).not.toBe(a);
    expect(rt.config()?.models[0].name).toBe("m2");
  });

  it("builds one agent per distinct settings: every setting counts, the thread and run do not", async () => {
    let builds = 0;
    const model = new ScriptedModel([]);
    const rt = await DeerFlowRuntime.open({
      dataDir: tmp(),
      log: () => undefined,
      agentFactory: () => {
        builds++;
        return createAgent({ model, stateSchema: threadStateSchema, name: "lead_agent" });
      },
    });
    open.push(rt);
    const base = await rt.buildAgent({ userId: "u1" });
    expect(await rt.buildAgent({ userId: "u1", threadId: "t9", runId: "r9" })).toBe(base);
    const variants: Partial<RunSettings>[] = [
      { modelName: "m2" },
      { modelName: "undefined" },
      { thinkingEnabled: false },
      { thinkingEnabled: true },
      { reasoningEffort: "high" },
      { isPlanMode: true },
      { subagentEnabled: true },
      { maxConcurrentSubagents: 2 },
      { maxTotalSubagents: 7 },
      { isBootstrap: true },
      { nonInteractive: true },
      { disableClarification: true },
      { userId: "u2" },
    ];
    const agents = new Set([base]);
    for (const v of variants) agents.add(await rt.buildAgent({ userId: "u1", ...v }));
    expect(agents.size).toBe(variants.length + 1);
    expect(builds).toBe(variants.length + 1);
    // The same settings again (any key order) reuse the cached agent.
    expect(await rt.buildAgent({ maxTotalSubagents: 7, userId: "u1" })).toBe(await rt.buildAgent({ userId: "u1", maxTotalSubagents: 7 }));
    expect(builds).toBe(variants.length + 1);
  });

  it("runs of the lead agent (its middlewares, file tools, sandbox) leave nothing on a caller's signal reused across them", async () => {
    // An embedded caller may hand every run the same long-lived signal (an app-wide shutdown signal, say).
    const steps = [
      { toolCalls: [{ name: "write_file", args: { description: "d", path: "/mnt/user-data/outputs/a.txt", content: "x" } }] },
      { toolCalls: [{ name: "ls", args: { description: "d", path: "/mnt/user-data/outputs" } }] },
      "done",
    ];
    const runs = 5;
    const model = new ScriptedModel(Array.from({ length: runs }, () => steps).flat());
    const rt = await DeerFlowRuntime.open({ config: appConfigFromText(CONFIG).config, dataDir: tmp(), modelFactory: scriptedModelFactory(model), log: () => undefined });
    open.push(rt);
    const agent = await rt.buildAgent({});
    const shared = new AbortController();
    for (let i = 0; i < runs; i++) {
      const r = await agent.invoke({ messages: [humanMessage(`run ${i}`)] }, { threadId: `t-shared-${i}`, signal: shared.signal });
      expect(r.status).toBe("success");
      expect(r.state.messages.filter((m) => m.type === "tool").map((m) => (m as { status?: string }).status)).toEqual(["success", "success"]);
    }
    model.assertComplete();
    expect(getEventListeners(shared.signal, "abort")).toEqual([]);
    const dependants = Object.getOwnPropertySymbols(shared.signal).find((s) => s.description === "kDependantSignals");
    expect(dependants ? ((shared.signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants]?.size ?? 0) : 0).toBe(0);
  });

  it("a config whose `tools:` key is absent gets the sandbox tool set; an explicit [] gets none", async () => {
    const dir = tmp();
    const withDefault = await DeerFlowRuntime.open({ config: appConfigFromText(CONFIG).config, dataDir: path.join(dir, "a"), modelFactory: scriptedModelFactory(new ScriptedModel([])), log: () => undefined });
    open.push(withDefault);
    const names = (await withDefault.buildAgent({})).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["ls", "read_file", "glob", "grep", "write_file", "str_replace"]));
    const none = await DeerFlowRuntime.open({ config: appConfigFromText(`${CONFIG}tools: []\n`).config, dataDir: path.join(dir, "b"), modelFactory: scriptedModelFactory(new ScriptedModel([])), log: () => undefined });
    open.push(none);
    expect((await none.buildAgent({})).tools.map((t) => t.name)).not.toContain("write_file");
  });

  it("deletes a thread everywhere and runs the thread-deleted hooks; close() runs close hooks newest first and shuts the sandbox down", async () => {
    const dir = tmp();
    const events: string[] = [];
    const model = new ScriptedModel(["hello"]);
    const rt = await DeerFlowRuntime.open({
      dataDir: dir,
      log: () => undefined,
      agentFactory: ({ checkpointer }) => createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    rt.onThreadDeleted((tid, uid) => void events.push(`deleted ${tid} ${uid}`));
    rt.onClose(() => void events.push("first"));
    rt.onClose(() => void events.push("second"));
    const agent = await rt.buildAgent({});
    await agent.invoke({ messages: [humanMessage("hi")] }, { threadId: "t-del" });
    const files = threadPaths(dir, "default", "t-del").outputs;
    mkdirSync(files, { recursive: true });
    writeFileSync(path.join(files, "a.txt"), "x");
    expect(await rt.readState("t-del")).toBeDefined();
    await rt.deleteThread("t-del", "default");
    expect(await rt.readState("t-del")).toBeUndefined();
    expect(existsSync(files)).toBe(false);
    expect(events).toEqual(["deleted t-del default"]);
    await rt.close();
    expect(events).toEqual(["deleted t-del default", "second", "first"]);
    // A runtime that opened its own sandbox provider shuts it down on close.
    const owned = await DeerFlowRuntime.open({ config: appConfigFromText(CONFIG).config, dataDir: tmp(), log: () => undefined });
    const shutdown = owned.sandboxProvider.shutdown.bind(owned.sandboxProvider);
    let shut = false;
    owned.sandboxProvider.shutdown = async () => {
      shut = true;
      await shutdown();
    };
    await owned.close();
    expect(shut).toBe(true);
  });
});

describe("DeerFlowClient on a runtime", () => {
  it("stream(..., {files}) uploads, attaches the files and the model is told in <current_uploads>; the title is the user's words; run hooks see the run", async () => {
    const dir = tmp();
    const model = new ScriptedModel(["I see the file."]);
    const runtime = await DeerFlowRuntime.open({ config: appConfigFromText(CONFIG).config, dataDir: path.join(dir, "data"), modelFactory: scriptedModelFactory(model), log: () => undefined });
    open.push(runtime);
    const finished: FinishedRun[] = [];
    runtime.recorder.addHook({ name: "spy", runFinished: (r) => void finished.push(r) });
    const csv = path.join(dir, "sales.csv");
    writeFileSync(csv, "region,amount\nnorth,10\n");
    const client = new DeerFlowClient(runtime);
    const answer = await client.chat("Summarise the sales", { threadId: "t-up", files: [csv], context: { secrets: { API_TOKEN: "s3cret" } } });
    expect(answer).toBe("I see the file.");
    const first = model.requests[0].messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
    expect(first).toContain("<current_uploads>");
    expect(first).toContain("/mnt/user-data/uploads/sales.csv");
    const [thread] = await client.listThreads();
    expect(thread.values).toEqual({ title: "Summarise the sales" });
    expect(finished.map((f) => [f.threadId, f.status])).toEqual([["t-up", "success"]]);
    const runs = await runtime.stores.runs.listByThread("t-up");
    expect(runs[0].usage.totalTokens).toBeGreaterThan(0);
    expect(runs[0].usage.totalTokens).toBe(runs[0].usage.leadAgentTokens);
    // request secrets never reach the stored run record
    expect(JSON.stringify(runs[0].kwargs)).not.toContain("s3cret");
    await client.close();
  });
});
