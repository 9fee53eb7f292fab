import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createAgent, MemoryCheckpointStore, threadStateSchema } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPublicAuthRoute } from "../../src/auth";
import { createGateway } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { authOn } from "./signed-in";

/**
 * Routes outside `/api` that anyone may reach, as `METHOD path` of the
 * router: the request guard (a middleware for every path), the health check
 * and the static web UI. A route registered outside the API (and so outside
 * its auth middleware) that is not listed here fails the walk.
 */
const PUBLIC_OUTSIDE_API: ReadonlySet<string> = new Set(["ALL /*", "GET /health", "GET /*"]);

const THREAD = "0b6f3c1e-5a7d-4c2b-9e8f-1a2b3c4d5e6f";
const RUN = "7c8d9e0f-1a2b-4c3d-8e5f-6a7b8c9d0e1f";

/** A concrete path for a route pattern: every parameter a valid id, a wildcard a file path. */
function fill(pattern: string): string {
  return pattern
    .replace(/:thread_id(\{[^}]*\})?/g, THREAD)
    .replace(/:run_id(\{[^}]*\})?/g, RUN)
    .replace(/:[A-Za-z_]+(\{[^}]*\})?/g, "probe-1")
    .replace(/\*/g, "mnt/user-data/outputs/probe.txt");
}

/** One route the walk found reachable without a user. */
interface Violation {
  route: string;
  why: string;
}

/**
 * Walk every route `gateway.app.routes` lists, without credentials: under
 * `/api` each must answer 401 `not_authenticated` (a state-changing request
 * carries a matching CSRF cookie and header, so only the missing session can
 * refuse it) and 401 for an unknown bearer token, unless it is one of the
 * public auth routes; outside `/api` each must be on {@link PUBLIC_OUTSIDE_API}.
 */
async function walk(gateway: Gateway, base: string): Promise<{ violations: Violation[]; checked: number; publicAuth: string[] }> {
  const violations: Violation[] = [];
  const publicAuth: string[] = [];
  let checked = 0;
  for (const r of gateway.app.routes) {
    const route = `${r.method} ${r.path}`;
    if (r.path !== "/api" && !r.path.startsWith("/api/")) {
      if (!PUBLIC_OUTSIDE_API.has(route)) violations.push({ route, why: "outside /api (no auth middleware) and not on the public list" });
      continue;
    }
    const url = fill(r.path);
    if (isPublicAuthRoute(r.method, url)) {
      publicAuth.push(route);
      continue;
    }
    // a middleware pattern (`ALL`) is tried with a read and a write
    for (const method of r.method === "ALL" ? ["GET", "POST"] : [r.method]) {
      const writes = !["GET", "HEAD"].includes(method);
      const body = writes ? "{}" : undefined;
      const csrf: Record<string, string> = writes ? { cookie: "csrf_token=walk", "x-csrf-token": "walk", "content-type": "application/json" } : {};
      const anonymous = await fetch(`${base}${url}`, { method, headers: csrf, body });
      const detail = ((await anonymous.json().catch(() => ({}))) as { detail?: { code?: string } }).detail;
      if (anonymous.status !== 401 || detail?.code !== "not_authenticated") {
        violations.push({ route: `${route} (${method} ${url})`, why: `without a session: ${anonymous.status} ${JSON.stringify(detail)}` });
      }
      const bearer = await fetch(`${base}${url}`, { method, headers: { authorization: "Bearer dfp_not-a-real-token", ...(writes ? { "content-type": "application/json" } : {}) }, body });
      await bearer.body?.cancel();
      if (bearer.status !== 401) violations.push({ route: `${route} (${method} ${url})`, why: `with an unknown bearer token: ${bearer.status}` });
      checked++;
    }
  }
  return { violations, checked, publicAuth };
}

describe("route walk: every route needs a user unless it is explicitly public", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gw-walk-"));
  const web = path.join(root, "web");
  const open = async (extra?: (gateway: Gateway) => void) => {
    const checkpointer = new MemoryCheckpointStore();
    const model = new ScriptedModel([]);
    const gateway = await createGateway({
      dataDir: fs.mkdtempSync(path.join(root, "data-")),
      checkpointer,
      webDistDir: web,
      agentsApiEnabled: true,
      auth: authOn({ registration_enabled: true }),
      log: () => undefined,
      agentFactory: () => createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    extra?.(gateway);
    return { gateway, url: await gateway.start({ port: 0 }) };
  };
  let main: { gateway: Gateway; url: string };

  beforeAll(async () => {
    fs.mkdirSync(web, { recursive: true });
    fs.writeFileSync(path.join(web, "index.html"), "<!doctype html><title>ui</title>");
    main = await open();
  });
  afterAll(async () => {
    await main.gateway.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("answers 401 on every API route without a session (and for an unknown token), except the public auth routes", async () => {
    const { violations, checked, publicAuth } = await walk(main.gateway, main.url);
    expect(violations).toEqual([]);
    // both mounts (/api and /api/langgraph) of every family were walked, not an empty table
    expect(checked).toBeGreaterThan(150);
    for (const family of ["threads/:thread_id/runs/:run_id/join", "threads/:thread_id/uploads", "memory/facts", "agents/:name", "skills/install", "mcp/config", "user-profile", "v1/auth/me", "v1/auth/tokens"]) {
      expect(main.gateway.app.routes.some((r) => r.path === `/api/${family}`), family).toBe(true);
    }
    // the public auth routes are exactly the sign-in bootstrap (and OIDC's redirects), on both mounts
    const expected = ["/api/v1/auth/initialize", "/api/v1/auth/login/local", "/api/v1/auth/logout", "/api/v1/auth/providers", "/api/v1/auth/register", "/api/v1/auth/setup-status"];
    const found = new Set(publicAuth.map((r) => r.split(" ")[1].replace("/api/langgraph/", "/api/")));
    for (const p of found) expect(expected.includes(p) || /^\/api\/v1\/auth\/(oauth|callback)\/:/.test(p), p).toBe(true);
    for (const p of expected) expect(found.has(p), p).toBe(true);
  });

  it("the public routes outside the API answer without a session: health and the web UI", async () => {
    expect((await fetch(`${main.url}/health`)).status).toBe(200);
    const page = await fetch(`${main.url}/some/page`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>ui</title>");
  });

  it("fails for a route registered outside the auth middleware", async () => {
    const leaky = await open((gateway) => {
      gateway.app.get("/internal/threads", (c) => c.json([]));
      gateway.app.post("/debug/reset", (c) => c.json({ ok: true }));
    });
    try {
      const { violations } = await walk(leaky.gateway, leaky.url);
      expect(violations.map((v) => v.route).sort()).toEqual(["GET /internal/threads", "POST /debug/reset"]);
    } finally {
      await leaky.gateway.close();
    }
  });
});
