import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../../..");
const fixture = [path.join(repo, "shared/fixtures/deerflow/config.example.yaml"), path.join(repo, "../shared/fixtures/deerflow/config.example.yaml")].find((p) => fs.existsSync(p));
if (!fixture) console.warn("[app-info tests] DeerFlow's config.example.yaml is absent: using a one-model stand-in for its models");

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("REST endpoints the web UI calls on load", () => {
  it("/api/features reports demo mode with the command that configures a real model", async () => {
    gw = await startTestGateway({ demoMode: { configureCommand: "npx deerflow init" } });
    const f = (await (await fetch(`${gw.url}/api/features`)).json()) as Record<string, unknown>;
    expect(f.demo_mode).toEqual({ enabled: true, configure_command: "npx deerflow init" });
  });

  it("serves health, models without secrets, features, skills, channels, suggestions, auth/me, assistants", async () => {
    const cfg = fixture ? (parse(fs.readFileSync(fixture, "utf8")) as { models?: Array<Record<string, unknown>> }) : { models: [] };
    const models = (cfg.models ?? []).length ? cfg.models! : [{ name: "m1", model: "gpt-x", api_key: "sk-secret", display_name: "M1" }];
    gw = await startTestGateway({ models, tokenUsageEnabled: true });
    const get = async (p: string) => {
      const r = await fetch(`${gw!.url}${p}`);
      expect(r.status, p).toBe(200);
      return r.json() as Promise<Record<string, unknown>>;
    };
    expect(await get("/health")).toEqual({ status: "healthy", service: "deer-flow-gateway" });
    const m = await get("/api/models");
    const list = m.models as Array<Record<string, unknown>>;
    expect(list.length).toBe(models.length);
    for (const entry of list) expect(Object.keys(entry).sort()).toEqual(["description", "display_name", "model", "name", "supports_reasoning_effort", "supports_thinking"]);
    expect(JSON.stringify(m)).not.toMatch(/api_key|sk-|\$OPENAI/);
    expect(m.token_usage).toEqual({ enabled: true });
    expect(await get("/api/features")).toEqual({ agents_api: { enabled: false }, browser_control: { enabled: false }, mcp_tasks: { enabled: false }, demo_mode: { enabled: false } });
    // The skills routes list the project's skills/ folder (see routes/skills.test.ts); here only the shape.
    expect(Array.isArray(((await get("/api/skills")) as { skills: unknown }).skills)).toBe(true);
    expect(await get("/api/channels/providers")).toEqual({ providers: [] });
    expect(await get("/api/suggestions/config")).toEqual({ enabled: false, max_suggestions: 3 });
    expect(await get("/api/threads/new-thread/uploads/limits")).toEqual({ max_files: 10, max_file_size: 52428800, max_total_size: 104857600 });
    expect(await get("/api/v1/auth/me")).toMatchObject({ id: "default", system_role: "admin" });
    expect(await (await postJson(`${gw.url}/api/threads/t1/suggestions`, { messages: [], n: 3 })).json()).toEqual({ suggestions: [] });
    const assistants = (await (await postJson(`${gw.url}/api/langgraph/assistants/search`, {})).json()) as Array<Record<string, unknown>>;
    expect(assistants[0]).toMatchObject({ assistant_id: "lead_agent", graph_id: "lead_agent", version: 1 });
    expect((await fetch(`${gw.url}/api/assistants/nope`)).status).toBe(404);
    const nf = await fetch(`${gw.url}/api/does-not-exist`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ detail: "Not Found" });
  });

  it("rejects the model_name context key when it is not configured", async () => {
    gw = await startTestGateway({ models: [{ name: "m1", model: "x" }], steps: ["ok"] });
    await postJson(`${gw.url}/api/threads`, { thread_id: "mt" });
    const r = await postJson(`${gw.url}/api/threads/mt/runs/stream`, { input: { messages: [] }, context: { model_name: "ghost" } });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({ detail: "Model 'ghost' is not in the configured model allowlist. Configured models: m1" });
    // the same rule for configurable.model_name (it used to fall back to the default model silently)
    const c = await postJson(`${gw.url}/api/threads/mt/runs/stream`, { input: { messages: [] }, config: { configurable: { model_name: "ghost2" } } });
    expect(c.status).toBe(400);
    expect(await c.json()).toEqual({ detail: "Model 'ghost2' is not in the configured model allowlist. Configured models: m1" });
  });

  it("serves the SPA with index.html fallback outside /api", async () => {
    const dist = fs.mkdtempSync(path.join(path.dirname(here), ".web-dist-"));
    fs.writeFileSync(path.join(dist, "index.html"), "<html>spa</html>");
    fs.mkdirSync(path.join(dist, "assets"));
    fs.writeFileSync(path.join(dist, "assets", "app.js"), "console.log(1)");
    try {
      gw = await startTestGateway({ webDistDir: dist });
      expect(await (await fetch(`${gw.url}/`)).text()).toBe("<html>spa</html>");
      expect(await (await fetch(`${gw.url}/workspace/chats/abc`)).text()).toBe("<html>spa</html>");
      const js = await fetch(`${gw.url}/assets/app.js`);
      expect(js.headers.get("content-type")).toMatch(/javascript/);
      expect(await (await fetch(`${gw.url}/..%2f..%2fpackage.json`)).text()).toBe("<html>spa</html>");
      expect((await fetch(`${gw.url}/api/nothing`)).status).toBe(404);
    } finally {
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });
});
