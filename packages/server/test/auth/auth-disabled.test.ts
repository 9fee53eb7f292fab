import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveAuthSettings } from "../../src/auth";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const ME = { id: "default", email: "default@test.local", system_role: "admin", needs_setup: false, oauth_provider: null };

describe("auth-disabled mode (DeerFlow's shapes)", () => {
  let gw: TestGateway;
  let api: string;
  beforeAll(async () => {
    // auth.enabled: true, but the environment variable wins
    gw = await startTestGateway({ auth: resolveAuthSettings({ enabled: true, jwt_secret: "x".repeat(40) }, { DEER_FLOW_AUTH_DISABLED: "1" }) });
    api = `${gw.url}/api`;
  });
  afterAll(async () => {
    await gw.close();
  });

  it("me is exactly the synthetic default admin without any cookie", async () => {
    const res = await fetch(`${api}/v1/auth/me`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(ME);
  });

  it("register answers 201 and login/local 200, both setting access_token and csrf_token", async () => {
    const reg = await fetch(`${api}/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "e2e@example.com", password: "e2e-password-123" }) });
    expect(reg.status).toBe(201);
    expect(await reg.json()).toMatchObject({ id: "default", system_role: "admin" });
    const names = (r: Response) => r.headers.getSetCookie().map((l) => l.split("=")[0]);
    expect(names(reg)).toEqual(expect.arrayContaining(["access_token", "csrf_token"]));
    const login = await fetch(`${api}/v1/auth/login/local`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=e2e%40example.com&password=whatever-at-all" });
    expect(login.status).toBe(200);
    expect(await login.json()).toEqual({ expires_in: 7 * 86400, needs_setup: false });
    expect(names(login)).toEqual(expect.arrayContaining(["access_token", "csrf_token"]));
  });

  it("no CSRF enforcement and no session needed", async () => {
    const res = await fetch(`${api}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
  });

  it("setup-status says no setup is needed", async () => {
    expect(await (await fetch(`${api}/v1/auth/setup-status`)).json()).toEqual({ needs_setup: false, registration_enabled: false });
  });

  it("no auth.db is created", async () => {
    const fs = await import("node:fs");
    expect(fs.existsSync(`${gw.dataDir}/auth.db`)).toBe(false);
  });
});

describe("auth settings", () => {
  it("enabled without jwt_secret fails at start with the key and the fix", async () => {
    expect(() => resolveAuthSettings({ enabled: true }, {})).toThrow(/auth\.jwt_secret.*deerflow init/s);
    await expect(startTestGateway({ auth: { enabled: true } })).rejects.toThrow(/auth\.jwt_secret/);
  });
  it("registration defaults off; registration_enabled wins over local.allow_registration", () => {
    const s = (x: object) => resolveAuthSettings({ enabled: true, jwt_secret: "y".repeat(32), ...x }, {});
    expect(s({}).registrationEnabled).toBe(false);
    expect(s({ local: { allow_registration: true } }).registrationEnabled).toBe(true);
    expect(s({ local: { allow_registration: true }, registration_enabled: false }).registrationEnabled).toBe(false);
  });
  it("a production deployment (DEER_FLOW_ENV / ENVIRONMENT) ignores DEER_FLOW_AUTH_DISABLED=1", () => {
    const on = { enabled: true, jwt_secret: "z".repeat(32) };
    expect(resolveAuthSettings(on, { DEER_FLOW_AUTH_DISABLED: "1", DEER_FLOW_ENV: "production" }).enabled).toBe(true);
    expect(resolveAuthSettings(on, { DEER_FLOW_AUTH_DISABLED: "1", ENVIRONMENT: "prod" }).enabled).toBe(true);
  });
  it("no auth section = disabled by config; the env var = disabled by env", () => {
    expect(resolveAuthSettings(undefined, {})).toMatchObject({ enabled: false, disabledBy: "config" });
    expect(resolveAuthSettings({ enabled: true, jwt_secret: "z".repeat(32) }, { DEER_FLOW_AUTH_DISABLED: "1" })).toMatchObject({ enabled: false, disabledBy: "env" });
  });
});
