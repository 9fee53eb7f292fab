import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { resolveAuthSettings } from "@deerflow-ts/server";
import { liveAuthSection } from "../../src/commands/serve-auth";
import { cleanEnv, runCli, startCli, stopChild, tempDir } from "../helpers";
import type { ChildProcess } from "node:child_process";

const env = cleanEnv();
const INIT = ["init", "--provider", "openai", "--api-key", "sk-1", "--model", "gpt-4.1", "--sandbox", "local", "--agents-api", "off"];
const PASSWORD = "correct-horse-battery";
const SECRET = "s".repeat(40);

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await stopChild(c);
});

async function serve(dir: string, ready: RegExp, extraEnv: Record<string, string> = {}) {
  const s = await startCli(["serve", "--port", "0"], { cwd: dir, env: { ...env, ...extraEnv }, ready });
  children.push(s.child);
  return s;
}

/** Sign in through the real login route; returns the cookie header of the session. */
async function login(url: string, email: string, password: string): Promise<{ status: number; cookie: string }> {
  const res = await fetch(`${url}/api/v1/auth/login/local`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: url },
    body: new URLSearchParams({ username: email, password, remember_me: "false" }),
  });
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { status: res.status, cookie };
}

describe("deerflow serve with sign-in", { timeout: 180_000 }, () => {
  it("a new user's path: init (sign-in yes, first admin) → serve → login → me; reset-password signs the session out at once", async () => {
    const dir = tempDir();
    const init = await runCli([...INIT, "--auth", "--admin-email", "admin@example.org"], { cwd: dir, env, input: `${PASSWORD}\n` });
    expect(init.code).toBe(0);
    const { match, output } = await serve(dir, /DeerFlow is running at (http:\S+)\nSign-in: [^\n]*\n/);
    const url = match[1];
    expect(output()).toContain("Sign-in: required (1 account(s), 1 admin(s)).");
    expect(output()).not.toContain("/setup");

    const anonymous = await fetch(`${url}/api/v1/auth/me`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { detail: { code: string } }).detail.code).toBe("not_authenticated");
    expect((await login(url, "admin@example.org", "wrong-password")).status).toBe(401);
    const session = await login(url, "admin@example.org", PASSWORD);
    expect(session.status).toBe(200);
    expect(session.cookie).toContain("access_token=");
    const me = await fetch(`${url}/api/v1/auth/me`, { headers: { cookie: session.cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email: "admin@example.org", system_role: "admin", needs_setup: false, oauth_provider: null });

    const reset = await runCli(["users", "reset-password", "admin@example.org", "--password-stdin"], { cwd: dir, env, input: "a-brand-new-password\n" });
    expect(reset.code).toBe(0);
    const after = await fetch(`${url}/api/v1/auth/me`, { headers: { cookie: session.cookie } });
    expect(after.status).toBe(401);
    expect((await login(url, "admin@example.org", PASSWORD)).status).toBe(401);
    expect((await login(url, "admin@example.org", "a-brand-new-password")).status).toBe(200);
  });

  it("without an admin, prints the /setup URL, and setup-status agrees", async () => {
    const dir = tempDir();
    expect((await runCli([...INIT, "--auth", "--yes"], { cwd: dir, env })).code).toBe(0);
    const { match, output } = await serve(dir, /No admin yet: open (http:\S+)\/setup /);
    expect(output()).toContain("Sign-in: required (0 account(s), 0 admin(s)).");
    const status = await fetch(`${match[1]}/api/v1/auth/setup-status`);
    expect(await status.json()).toEqual({ needs_setup: true, registration_enabled: false });
  });

  it("says sign-in is off when it is, and DEER_FLOW_AUTH_DISABLED=1 wins over auth.enabled", async () => {
    const off = tempDir();
    expect((await runCli([...INIT, "--no-auth", "--yes"], { cwd: off, env })).code).toBe(0);
    const a = await serve(off, /Sign-in: [^\n]*\n/);
    expect(a.output()).toContain("Sign-in: off (the config has no `auth.enabled: true`)");
    const on = tempDir();
    expect((await runCli([...INIT, "--auth", "--yes"], { cwd: on, env })).code).toBe(0);
    const b = await serve(on, /DeerFlow is running at (http:\S+)\nSign-in: [^\n]*\n/, { DEER_FLOW_AUTH_DISABLED: "1" });
    expect(b.output()).toContain("Sign-in: off (DEER_FLOW_AUTH_DISABLED=1 is set");
    expect(await (await fetch(`${b.match[1]}/api/v1/auth/me`)).json()).toEqual({ id: "default", email: "default@test.local", system_role: "admin", needs_setup: false, oauth_provider: null });
  });

  it("a non-loopback --host passes the check when sign-in is on, and is refused with the reason when it is off", async () => {
    const dir = tempDir();
    expect((await runCli([...INIT, "--auth", "--yes"], { cwd: dir, env })).code).toBe(0);
    // 192.0.2.1 (TEST-NET-1) is on no interface here: past the check, listen fails; nothing is opened or sent
    const allowed = await runCli(["serve", "--host", "192.0.2.1", "--port", "0"], { cwd: dir, env });
    expect(allowed.stderr).not.toContain("Refusing");
    expect(allowed.stderr).toMatch(/EADDRNOTAVAIL|address not available/);
    const envOff = await runCli(["serve", "--host", "192.0.2.1", "--port", "0"], { cwd: dir, env: { ...env, DEER_FLOW_AUTH_DISABLED: "1" } });
    expect(envOff.code).toBe(2);
    expect(envOff.stderr).toContain("Refusing to listen on 192.0.2.1");
    expect(envOff.stderr).toContain("DEER_FLOW_AUTH_DISABLED=1 is set");
    expect(envOff.stderr).toContain("Unset DEER_FLOW_AUTH_DISABLED");
  });

  it("stops before listening when the secret is missing from .env, naming the variable and the fix", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "config.yaml"), "config_version: 34\nauth:\n  enabled: true\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n");
    const missing = await runCli(["serve", "--port", "0"], { cwd: dir, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("auth.jwt_secret: $DEER_FLOW_JWT_SECRET is not set");
    expect(missing.stdout).not.toContain("DeerFlow is running");
    writeFileSync(path.join(dir, "config.yaml"), "config_version: 34\nauth:\n  enabled: true\n");
    const unset = await runCli(["serve", "--port", "0"], { cwd: dir, env });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain("auth.jwt_secret is not set");
    expect(unset.stderr).toContain("deerflow init");
  });
});

describe("the auth section serve hands the gateway", () => {
  const on = { auth: { enabled: true, jwt_secret: SECRET } } as unknown as AppConfig;
  const off = { auth: { enabled: false } } as unknown as AppConfig;
  const broken = { auth: { enabled: true, jwt_secret: null } } as unknown as AppConfig;

  it("follows config.yaml edits on loopback (the same section object while the config is unchanged)", () => {
    let config = on;
    const section = liveAuthSection({ config: () => config, pinnedOn: false, env: {}, log: () => {} });
    expect(section()).toBe(on.auth);
    expect(section()).toBe(section());
    config = off;
    expect(resolveAuthSettings(section(), {}).enabled).toBe(false);
  });

  it("stays on when the bind is beyond loopback because sign-in was on (an edit cannot open the agent to the network)", () => {
    let config = on;
    const logs: string[] = [];
    const section = liveAuthSection({ config: () => config, pinnedOn: true, env: {}, log: (m) => logs.push(m) });
    config = off;
    expect(section()).toBe(on.auth);
    expect(resolveAuthSettings(section(), {}).enabled).toBe(true);
    expect(logs.join("\n")).toContain("stays on until `deerflow serve` restarts");
    // a broken edit is handed on: the gateway answers 503 with the reason, it does not open up
    config = broken;
    expect(section()).toBe(broken.auth);
    expect(() => resolveAuthSettings(section(), {})).toThrow(/jwt_secret/);
    const registration = { auth: { enabled: true, jwt_secret: SECRET, registration_enabled: true } } as unknown as AppConfig;
    config = registration;
    expect(resolveAuthSettings(section(), {}).registrationEnabled).toBe(true);
    config = off;
    expect(section()).toBe(registration.auth);
  });
});
