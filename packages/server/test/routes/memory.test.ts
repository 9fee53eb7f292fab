import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

describe("memory routes (real HTTP server)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gw-memory-"));
  let gw: TestGateway;
  let api: string;
  const send = (method: string, p: string, body?: unknown) =>
    fetch(`${api}${p}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

  beforeAll(async () => {
    gw = await startTestGateway({ dataDir: path.join(root, "data") });
    api = `${gw.url}/api`;
  });
  afterAll(async () => {
    await gw.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("GET /api/memory returns DeerFlow's empty MemoryResponse", async () => {
    const res = await send("GET", "/memory");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      version: "1.0",
      user: { workContext: { summary: "", updatedAt: "" }, personalContext: { summary: "" }, topOfMind: { summary: "" } },
      history: { recentMonths: { summary: "" }, earlierContext: { summary: "" }, longTermBackground: { summary: "" } },
      facts: [],
    });
  });

  it("fact create / patch / delete with DeerFlow's statuses", async () => {
    const created = await send("POST", "/memory/facts", { content: "User prefers dark mode", category: "preference", confidence: 0.9 });
    expect(created.status).toBe(200);
    const doc = (await created.json()) as { facts: Array<{ id: string; content: string; source: string; confidence: number }> };
    expect(doc.facts).toHaveLength(1);
    expect(doc.facts[0]).toMatchObject({ content: "User prefers dark mode", source: "manual", confidence: 0.9 });
    const id = doc.facts[0].id;
    expect((await send("POST", "/memory/facts", { content: "  user prefers DARK mode " })).status).toBe(409);
    expect((await send("POST", "/memory/facts", { content: "" })).status).toBe(422);
    expect((await send("POST", "/memory/facts", { content: "x", confidence: 2 })).status).toBe(422);
    const patched = await send("PATCH", `/memory/facts/${id}`, { confidence: 0.6 });
    expect(((await patched.json()) as typeof doc).facts[0]).toMatchObject({ id, content: "User prefers dark mode", confidence: 0.6 });
    expect((await send("PATCH", "/memory/facts/fact_missing", { content: "y" })).status).toBe(404);
    expect((await send("DELETE", "/memory/facts/fact_missing")).status).toBe(404);
    const deleted = await send("DELETE", `/memory/facts/${id}`);
    expect(((await deleted.json()) as typeof doc).facts).toEqual([]);
  });

  it("export → clear → import round-trips, per agent too; reload sees an external edit", async () => {
    await send("POST", "/memory/facts", { content: "User lives in Lisbon", category: "context", confidence: 0.95 });
    const exported = (await (await send("GET", "/memory/export")).json()) as { facts: Array<{ content: string }> };
    expect(exported.facts.map((f) => f.content)).toEqual(["User lives in Lisbon"]);
    expect(((await (await send("DELETE", "/memory")).json()) as typeof exported).facts).toEqual([]);
    const imported = (await (await send("POST", "/memory/import", exported)).json()) as typeof exported;
    expect(imported.facts.map((f) => f.content)).toEqual(["User lives in Lisbon"]);
    await send("POST", "/memory/facts?agent_name=writer", { content: "Writer agent: user wants British spelling" });
    expect(((await (await send("GET", "/memory?agent_name=writer")).json()) as typeof exported).facts.map((f) => f.content)).toEqual(["Writer agent: user wants British spelling"]);
    expect((await send("GET", "/memory?agent_name=../x")).status).toBe(422);
    const file = path.join(gw.gateway.runtime.dataDir, "users", "default", "memory.json");
    const raw = JSON.parse(fs.readFileSync(file, "utf8"));
    raw.user.workContext.summary = "Edited on disk";
    fs.writeFileSync(file, JSON.stringify(raw));
    const reloaded = (await (await send("POST", "/memory/reload")).json()) as { user: { workContext: { summary: string } } };
    expect(reloaded.user.workContext.summary).toBe("Edited on disk");
    fs.writeFileSync(file, "{ torn");
    expect((await send("POST", "/memory/reload")).status).toBe(500);
    fs.writeFileSync(file, JSON.stringify(raw));
  });

  it("config, status and the per-user off switch", async () => {
    const cfg = (await (await send("GET", "/memory/config")).json()) as Record<string, unknown>;
    expect(cfg).toMatchObject({ enabled: true, mode: "middleware", injection_enabled: true, shutdown_flush_timeout_seconds: 30, manager_class: "deermem", backend_config: { max_injection_tokens: 2000, debounce_seconds: 30 } });
    const status = (await (await send("GET", "/memory/status")).json()) as Record<string, any>;
    expect(Object.keys(status)).toEqual(expect.arrayContaining(["config", "data", "updater", "user_enabled"]));
    expect(status.data.version).toBe("1.0");
    expect(await (await send("PUT", "/memory/settings", { enabled: false })).json()).toEqual({ enabled: false });
    expect(await (await send("GET", "/memory/settings")).json()).toEqual({ enabled: false });
    expect(await (await send("PUT", "/memory/settings", { enabled: true })).json()).toEqual({ enabled: true });
    expect(await (await send("GET", "/memory/relations")).json()).toEqual({ relations: [] });
    expect(await (await send("GET", "/memory/threads")).json()).toEqual({ threads: [] });
  });
});
