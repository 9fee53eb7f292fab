import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const send = (method: string, url: string, body?: unknown) =>
  fetch(url, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("/api/agents", () => {
  it("answers 403 on every route while agents_api is off, and /api/features says so", async () => {
    gw = await startTestGateway();
    const api = `${gw.url}/api`;
    expect(await (await fetch(`${api}/features`)).json()).toMatchObject({ agents_api: { enabled: false } });
    for (const [method, p, body] of [
      ["GET", "/agents"],
      ["GET", "/agents/check?name=x"],
      ["GET", "/agents/x"],
      ["POST", "/agents", { name: "x", soul: "s" }],
      ["PUT", "/agents/x", { description: "d" }],
      ["DELETE", "/agents/x"],
      ["GET", "/user-profile"],
    ] as const) {
      const r = await send(method, `${api}${p}`, body);
      expect(r.status, `${method} ${p}`).toBe(403);
      expect((await r.json()).detail).toMatch(/agents_api\.enabled=true/);
    }
    expect(fs.existsSync(path.join(gw.dataDir, "users"))).toBe(false);
  });

  it("creates, lists, checks, reads, updates and deletes agents with DeerFlow's shapes", async () => {
    gw = await startTestGateway({ agentsApiEnabled: true, models: [{ name: "basic", model: "m" }, { name: "smart", model: "m2" }] });
    const api = `${gw.url}/api`;
    expect(await (await fetch(`${api}/features`)).json()).toMatchObject({ agents_api: { enabled: true } });
    expect(await (await fetch(`${api}/agents`)).json()).toEqual({ agents: [] });
    expect(await (await fetch(`${api}/agents/check?name=Code-Reviewer`)).json()).toEqual({ available: true, name: "code-reviewer" });

    const created = await postJson(`${api}/agents`, { name: "Code-Reviewer", description: "Reviews code", tool_groups: ["file:read"], soul: "You review code.", reasoning_effort: "high" });
    expect(created.status).toBe(201);
    const agent = await created.json();
    expect(agent).toEqual({
      name: "code-reviewer",
      description: "Reviews code",
      model: null,
      tool_groups: ["file:read"],
      skills: null,
      model_settings: null,
      thinking_enabled: null,
      reasoning_effort: "high",
      soul: "You review code.",
    });
    expect(fs.readFileSync(path.join(gw.dataDir, "users", "default", "agents", "code-reviewer", "SOUL.md"), "utf8")).toBe("You review code.");

    expect(await (await fetch(`${api}/agents/check?name=code-REVIEWER`)).json()).toEqual({ available: false, name: "code-reviewer" });
    expect((await postJson(`${api}/agents`, { name: "CODE-reviewer", soul: "x" })).status).toBe(409);
    expect((await postJson(`${api}/agents`, { name: "bad name", soul: "x" })).status).toBe(422);
    expect((await fetch(`${api}/agents/check?name=a_b`)).status).toBe(422);
    expect((await postJson(`${api}/agents`, { name: "m", soul: "x", model: "unknown" })).status).toBe(422);
    expect((await postJson(`${api}/agents`, { name: "m", soul: "x", reasoning_effort: "extreme" })).status).toBe(422);

    const list = (await (await fetch(`${api}/agents`)).json()) as { agents: Array<{ name: string; soul: string }> };
    expect(list.agents.map((a) => [a.name, a.soul])).toEqual([["code-reviewer", "You review code."]]);
    expect((await (await fetch(`${api}/agents/Code-Reviewer`)).json()).description).toBe("Reviews code");
    expect((await fetch(`${api}/agents/nobody`)).status).toBe(404);

    // partial update: omitted fields stay, explicit null clears, sub-fields of model_settings merge
    let r = await send("PUT", `${api}/agents/code-reviewer`, { model: "smart", model_settings: { temperature: 0.2, max_tokens: 100 } });
    expect(await r.json()).toMatchObject({ model: "smart", model_settings: { temperature: 0.2, max_tokens: 100 }, tool_groups: ["file:read"], soul: "You review code." });
    r = await send("PUT", `${api}/agents/code-reviewer`, { model_settings: { max_tokens: null }, tool_groups: null, soul: "New soul." });
    expect(await r.json()).toMatchObject({ model: "smart", model_settings: { temperature: 0.2 }, tool_groups: null, reasoning_effort: "high", soul: "New soul." });
    expect((await send("PUT", `${api}/agents/code-reviewer`, { model: "nope" })).status).toBe(422);
    expect((await send("PUT", `${api}/agents/ghost`, { description: "x" })).status).toBe(404);

    // a legacy shared agent is listed, but neither updated nor deleted through the per-user API
    fs.mkdirSync(path.join(gw.dataDir, "agents", "shared"), { recursive: true });
    fs.writeFileSync(path.join(gw.dataDir, "agents", "shared", "config.yaml"), "name: shared\ndescription: legacy\n");
    expect(((await (await fetch(`${api}/agents`)).json()) as { agents: Array<{ name: string }> }).agents.map((a) => a.name)).toEqual(["code-reviewer", "shared"]);
    expect((await send("PUT", `${api}/agents/shared`, { description: "x" })).status).toBe(409);
    expect((await send("DELETE", `${api}/agents/shared`)).status).toBe(409);

    r = await send("DELETE", `${api}/agents/code-reviewer`);
    expect(r.status).toBe(204);
    expect((await send("DELETE", `${api}/agents/code-reviewer`)).status).toBe(404);
    expect(fs.existsSync(path.join(gw.dataDir, "users", "default", "agents", "code-reviewer"))).toBe(false);
  });

  it("reads and writes the user profile (USER.md)", async () => {
    gw = await startTestGateway({ agentsApiEnabled: true });
    const api = `${gw.url}/api`;
    expect(await (await fetch(`${api}/user-profile`)).json()).toEqual({ content: null });
    expect(await (await send("PUT", `${api}/user-profile`, { content: "I write Go." })).json()).toEqual({ content: "I write Go." });
    expect(await (await fetch(`${api}/user-profile`)).json()).toEqual({ content: "I write Go." });
  });

  it("takes agents_api.enabled from the app config", async () => {
    gw = await startTestGateway({ appConfig: { models: [], agents_api: { enabled: true } } });
    expect(await (await fetch(`${gw.url}/api/features`)).json()).toMatchObject({ agents_api: { enabled: true } });
    expect((await fetch(`${gw.url}/api/agents`)).status).toBe(200);
  });
});
