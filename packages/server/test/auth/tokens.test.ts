import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requiredScope } from "../../src/auth";
import { addUser, initializeAdmin, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";
import { humanInput } from "../helpers/test-gateway";

describe("personal access tokens", () => {
  let gw: AuthGateway;
  let admin: SignedIn;
  let user: SignedIn;
  let runToken: string;
  let readToken: string;
  beforeAll(async () => {
    gw = await startAuthGateway({ steps: ["first answer", "second answer", "third answer"] });
    admin = await initializeAdmin(gw.api);
    user = await addUser(admin, "user@example.com");
    runToken = (await user.json("POST", "/v1/auth/tokens", { name: "ci", scopes: ["run"] }, 201)).token;
    readToken = (await user.json("POST", "/v1/auth/tokens", { name: "dashboard", scopes: ["read"] }, 201)).token;
  });
  afterAll(async () => {
    await gw.close();
  });

  const bearer = (token: string, method = "GET", path = "/v1/auth/me", body?: unknown) =>
    fetch(`${gw.api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it("create answers the secret once; list shows no secret but last_used_at; the database holds only a hash", async () => {
    const created = await user.json("POST", "/v1/auth/tokens", { name: "laptop", scopes: ["read", "run"] }, 201);
    expect(Object.keys(created).sort()).toEqual(["created_at", "id", "name", "scopes", "token"]);
    expect(created.token).toMatch(/^dfp_[A-Za-z0-9_-]{43}$/);
    expect(created.scopes).toEqual(["read", "run"]);
    const listed = await user.json("GET", "/v1/auth/tokens");
    const mine = listed.tokens.find((t: { id: string }) => t.id === created.id);
    expect(mine).toEqual({ id: created.id, name: "laptop", scopes: ["read", "run"], created_at: created.created_at, last_used_at: null });
    expect(JSON.stringify(listed)).not.toContain(created.token);
    // the account store never sees the secret
    const fs = await import("node:fs");
    const raw = fs.readFileSync(`${gw.dataDir}/auth.db`);
    expect(raw.includes(Buffer.from(created.token.slice(4)))).toBe(false);
    expect((await bearer(created.token)).status).toBe(200);
    const after = (await user.json("GET", "/v1/auth/tokens")).tokens.find((t: { id: string }) => t.id === created.id);
    expect(after.last_used_at).toEqual(expect.any(String));
  });

  it("a bearer token identifies its owner; CSRF does not apply to it", async () => {
    const me = await (await bearer(runToken)).json();
    expect(me).toMatchObject({ email: "user@example.com", system_role: "user" });
    const res = await bearer(runToken, "POST", "/threads", { metadata: {} });
    expect(res.status).toBe(200);
  });

  it("LangGraph SDK: a run token creates a thread and streams a run; a read token reads it but cannot start one", async () => {
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph`, defaultHeaders: { Authorization: `Bearer ${runToken}` } });
    const thread = await client.threads.create();
    const events: string[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "lead_agent", { input: humanInput("hello"), streamMode: ["values"] })) events.push(part.event);
    expect(events).toContain("values");
    expect(events).not.toContain("error");

    const reader = new Client({ apiUrl: `${gw.url}/api/langgraph`, defaultHeaders: { Authorization: `Bearer ${readToken}` } });
    expect((await reader.threads.search()).map((t) => t.thread_id)).toContain(thread.thread_id);
    expect((await reader.threads.getHistory(thread.thread_id)).length).toBeGreaterThan(0);
    await expect(reader.threads.create()).rejects.toThrow(/403|run/);
    const refused = await bearer(readToken, "POST", `/threads/${thread.thread_id}/runs/wait`, { assistant_id: "lead_agent", input: humanInput("x") });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toMatch(/lacks the 'run' scope/);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="run"');
  });

  it("a run token cannot delete threads, mint tokens or change the password (admin scope)", async () => {
    const t = await (await bearer(runToken, "POST", "/threads", { metadata: {} })).json();
    expect((await bearer(runToken, "DELETE", `/threads/${t.thread_id}`)).status).toBe(403);
    expect((await bearer(runToken, "POST", "/v1/auth/tokens", { name: "more", scopes: ["run"] })).status).toBe(403);
    expect((await bearer(runToken, "POST", "/v1/auth/change-password", { current_password: "x", new_password: "y-long-enough-1" })).status).toBe(403);
  });

  it("a user cannot mint an admin-scoped token; an admin can, and it reaches admin-only routes", async () => {
    const refused = await user.send("POST", "/v1/auth/tokens", { name: "x", scopes: ["admin"] });
    expect(refused.status).toBe(403);
    const adminToken = (await admin.json("POST", "/v1/auth/tokens", { name: "ops", scopes: ["admin"] }, 201)).token;
    expect((await bearer(adminToken, "GET", "/v1/auth/users")).status).toBe(200);
    // an admin's read token is not an admin credential
    const adminRead = (await admin.json("POST", "/v1/auth/tokens", { name: "ro", scopes: ["read"] }, 201)).token;
    expect((await bearer(adminRead, "GET", "/v1/auth/users")).status).toBe(403);
  });

  it("revoking works at once; someone else's token id is 404", async () => {
    const t = await user.json("POST", "/v1/auth/tokens", { name: "temp", scopes: ["read"] }, 201);
    expect((await bearer(t.token)).status).toBe(200);
    expect((await admin.send("DELETE", `/v1/auth/tokens/${t.id}`)).status).toBe(404);
    expect((await bearer(t.token)).status).toBe(200);
    expect((await user.send("DELETE", `/v1/auth/tokens/${t.id}`)).status).toBe(200);
    const res = await bearer(t.token);
    expect(res.status).toBe(401);
    expect((await res.json()).detail.code).toBe("token_invalid");
  });

  it("an unknown or malformed dfp_ token is 401, never a fallback to the request's session cookie", async () => {
    for (const t of ["dfp_nope", `dfp_${"A".repeat(43)}`, `${runToken}x`, `dfp_${"x".repeat(300)}`]) {
      const res = await fetch(`${gw.api}/v1/auth/me`, { headers: { authorization: `Bearer ${t}`, cookie: user.jar.header() } });
      expect(res.status, t).toBe(401);
    }
  });

  it("tokens keep working after a password change, and die with the account", async () => {
    const other = await addUser(admin, "temp@example.com");
    const t = (await other.json("POST", "/v1/auth/tokens", { name: "t", scopes: ["read"] }, 201)).token;
    await other.json("POST", "/v1/auth/change-password", { current_password: "another-long-passphrase", new_password: "yet-another-passphrase" });
    expect((await bearer(t)).status).toBe(200);
    const id = (await (await bearer(t)).json()).id;
    await admin.json("DELETE", `/v1/auth/users/${id}`);
    expect((await bearer(t)).status).toBe(401);
  });

  it("token requests validate name and scopes", async () => {
    expect((await user.send("POST", "/v1/auth/tokens", { name: "", scopes: ["read"] })).status).toBe(422);
    expect((await user.send("POST", "/v1/auth/tokens", { name: "x", scopes: [] })).status).toBe(422);
    expect((await user.send("POST", "/v1/auth/tokens", { name: "x", scopes: ["root"] })).status).toBe(422);
  });
});

describe("requiredScope", () => {
  it("maps the SDK's read-only POSTs to read and run starts to run, everything else to admin", () => {
    expect(requiredScope("GET", "/api/threads/t1/runs/r1/join")).toBe("read");
    expect(requiredScope("POST", "/api/langgraph/threads/search")).toBe("read");
    expect(requiredScope("POST", "/api/threads/t1/history")).toBe("read");
    expect(requiredScope("POST", "/api/assistants/search")).toBe("read");
    expect(requiredScope("POST", "/api/threads")).toBe("run");
    expect(requiredScope("POST", "/api/langgraph/threads/t1/runs/stream")).toBe("run");
    expect(requiredScope("POST", "/api/threads/t1/runs/r1/cancel")).toBe("run");
    expect(requiredScope("POST", "/api/runs/wait")).toBe("run");
    expect(requiredScope("POST", "/api/threads/t1/uploads")).toBe("run");
    expect(requiredScope("POST", "/api/threads/t1/state")).toBe("admin");
    expect(requiredScope("DELETE", "/api/threads/t1")).toBe("admin");
    expect(requiredScope("PUT", "/api/mcp/config")).toBe("admin");
    expect(requiredScope("POST", "/api/threads/search/extra")).toBe("admin");
  });
});
