import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { appConfigFromText, createAgent, DeerFlowRuntime, threadStateSchema, tool } from "@deerflow-ts/harness";
import type { RunContext } from "@deerflow-ts/harness";
import { ScriptedModel, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-typed-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(runtime: DeerFlowRuntime): Promise<string> {
  const started = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  cleanups.push(async () => {
    await started.gateway.close();
    await runtime.close();
  });
  return started.url;
}

async function newThread(url: string): Promise<string> {
  return ((await (await postJson(`${url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
}

const SECRET = "tok-gateway-8c7b6a5948";

describe("a gateway run's context is typed for its tools (DeerFlow's wire names at the edge)", () => {
  it("context.agent_name, context.secrets and the run settings reach a tool as typed fields; the secret is in no record, checkpoint or history", async () => {
    let seen: RunContext | undefined;
    const probe = tool({
      name: "probe",
      description: "reads the run context",
      schema: z.object({}),
      execute: (_a, rt) => {
        seen = rt.context;
        return rt.context.secrets.get("API_TOKEN") === SECRET ? "secret bound" : "no secret";
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "probe", args: {} }] }, "done"]);
    const dataDir = tmp();
    const runtime = await DeerFlowRuntime.open({
      dataDir,
      log: () => undefined,
      agentFactory: ({ checkpointer }) => createAgent({ model, tools: [probe], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    const url = await serve(runtime);
    const tid = await newThread(url);
    const res = await postJson(`${url}/api/threads/${tid}/runs/wait`, {
      input: humanInput("go"),
      context: { agent_name: "writer", reasoning_effort: "high", is_plan_mode: true, secrets: { API_TOKEN: SECRET }, user_id: "someone-else" },
    });
    expect(res.status).toBe(200);
    const body = JSON.stringify(await res.json());
    expect(body).toContain("secret bound");
    expect(body).not.toContain(SECRET);
    // the identity is the server's (the caller), not the request's user_id
    expect(seen?.identity).toMatchObject({ threadId: tid, userId: "default", agentName: "writer" });
    expect(seen?.settings).toMatchObject({ reasoningEffort: "high", isPlanMode: true });
    const runsRes = await fetch(`${url}/api/threads/${tid}/runs`);
    expect(runsRes.status).toBe(200);
    const runs = await runsRes.text();
    expect(JSON.parse(runs)).toHaveLength(1);
    expect(runs).not.toContain(SECRET);
    const historyRes = await postJson(`${url}/api/threads/${tid}/history`, {});
    expect(historyRes.status).toBe(200);
    const history = await historyRes.text();
    expect(history.length).toBeGreaterThan(2);
    expect(history).not.toContain(SECRET);
    const snapshots = await runtime.checkpointer.list(tid);
    expect(JSON.stringify(snapshots)).not.toContain(SECRET);
  });

  let llm: ScriptedLLMServer | undefined;
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
  });

  it("reasoning_effort of a run request reaches Anthropic's output_config.effort", async () => {
    llm = await startScriptedLLMServer({ script: ["ok"] });
    const { config } = appConfigFromText(
      ["models:", "  - name: claude", "    use: anthropic", "    model: claude-sonnet-4", `    base_url: ${llm.url}`, "    api_key: k", "    max_tokens: 1000", "    supports_reasoning_effort: true", "sandbox:", "  use: local", "title:", "  enabled: false"].join("\n"),
    );
    const runtime = await DeerFlowRuntime.open({ config, dataDir: tmp(), log: () => undefined });
    const url = await serve(runtime);
    const tid = await newThread(url);
    const res = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("q"), context: { reasoning_effort: "xhigh" } });
    expect(res.status).toBe(200);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0].body?.output_config).toEqual({ effort: "xhigh" });
  });
});
