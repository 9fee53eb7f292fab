import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openUserStore } from "../../src/auth";
import { ADMIN_PASSWORD, initializeAdmin, postLogin, startAuthGateway, USER_PASSWORD } from "../helpers/auth-session";
import type { AuthGateway } from "../helpers/auth-session";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("login throttling (one process, injected clock)", () => {
  let gw: AuthGateway;
  beforeEach(async () => {
    gw = await startAuthGateway();
    const admin = await initializeAdmin(gw.api);
    await admin.json("POST", "/v1/auth/users", { email: "user@example.com", password: USER_PASSWORD, system_role: "user" }, 201);
  });
  afterEach(async () => {
    await gw.close();
  });

  it("5 failures lock that account from this address for 300 s (429 + Retry-After), even with the right password", async () => {
    for (let i = 0; i < 5; i++) expect((await postLogin(gw.api, "admin@example.com", "wrong-password-x")).status).toBe(401);
    const locked = await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD);
    expect(locked.status).toBe(429);
    expect(await locked.json()).toEqual({ detail: "Too many login attempts. Try again later." });
    expect(locked.headers.get("retry-after")).toBe("300");
    // the account key is case-insensitive: a different spelling is the same account
    expect((await postLogin(gw.api, "ADMIN@Example.com", ADMIN_PASSWORD)).status).toBe(429);
    gw.clock.advance(299_000);
    const later = await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD);
    expect(later.status).toBe(429);
    expect(later.headers.get("retry-after")).toBe("1");
    gw.clock.advance(1_000);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(200);
  });

  it("another account from the same address is unaffected", async () => {
    for (let i = 0; i < 5; i++) await postLogin(gw.api, "admin@example.com", "wrong-password-x");
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(429);
    expect((await postLogin(gw.api, "user@example.com", USER_PASSWORD)).status).toBe(200);
  });

  it("unknown accounts are counted too (no hint that they do not exist)", async () => {
    for (let i = 0; i < 5; i++) expect((await postLogin(gw.api, "ghost@example.com", "wrong-password-x")).status).toBe(401);
    expect((await postLogin(gw.api, "ghost@example.com", "wrong-password-x")).status).toBe(429);
  });

  it("a success clears the count", async () => {
    for (let i = 0; i < 4; i++) await postLogin(gw.api, "admin@example.com", "wrong-password-x");
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await postLogin(gw.api, "admin@example.com", "wrong-password-x")).status).toBe(401);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(200);
  });

  it("X-Real-IP is ignored without trusted proxies: rotating it does not escape the lock", async () => {
    for (let i = 0; i < 5; i++) await postLogin(gw.api, "admin@example.com", "wrong-password-x", {}, { "x-real-ip": `10.0.0.${i}` });
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { "x-real-ip": "10.9.9.9" })).status).toBe(429);
  });
});

describe("login throttling behind a trusted proxy", () => {
  let gw: AuthGateway;
  beforeAll(async () => {
    gw = await startAuthGateway({ trustedProxies: "127.0.0.1/8, ::1" });
    await initializeAdmin(gw.api);
  });
  afterAll(async () => {
    await gw.close();
  });

  it("counts per X-Real-IP the proxy set: one client's lock does not lock another", async () => {
    for (let i = 0; i < 5; i++) await postLogin(gw.api, "admin@example.com", "wrong-password-x", {}, { "x-real-ip": "203.0.113.7" });
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { "x-real-ip": "203.0.113.7" })).status).toBe(429);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { "x-real-ip": "203.0.113.8" })).status).toBe(200);
  });

  it("X-Forwarded-Proto: https from the proxy makes the cookies Secure", async () => {
    const res = await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { "x-real-ip": "203.0.113.9", "x-forwarded-proto": "https" });
    expect(res.status).toBe(200);
    for (const line of res.headers.getSetCookie()) expect(line).toMatch(/; Secure/);
  });
});

interface Child {
  proc: ChildProcess;
  url: string;
}

/** Start a gateway process on `dataDir`; resolves once it printed its listening line. */
function startChild(dataDir: string): Promise<Child> {
  const script = path.join(here, "..", "helpers", "auth-server.ts");
  const proc = spawn(process.execPath, ["--conditions=deerflow-source", "--import", "tsx", script, dataDir], { cwd: path.resolve(here, "../../../.."), stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ proc, url: (JSON.parse(line) as { url: string }).url });
    });
    proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    proc.once("exit", (code) => reject(new Error(`gateway process exited (${code}) before listening: ${err}`)));
  });
}

function stopChild(c: Child | undefined): Promise<void> {
  if (!c || c.proc.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.proc.once("exit", () => resolve());
    c.proc.kill("SIGTERM");
  });
}

describe("login throttling across two server processes on one data dir", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-throttle-"));
  let a: Child | undefined;
  let b: Child | undefined;
  beforeAll(async () => {
    // the account exists before either process starts (as `deerflow users add` would make it)
    const store = openUserStore(dataDir);
    await store.create({ email: "admin@example.com", password: ADMIN_PASSWORD, systemRole: "admin" });
    store.close();
    [a, b] = await Promise.all([startChild(dataDir), startChild(dataDir)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([stopChild(a), stopChild(b)]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("3 failures on one process and 2 on the other lock the pair on both", async () => {
    expect(a!.url).not.toBe(b!.url);
    for (let i = 0; i < 3; i++) expect((await postLogin(`${a!.url}/api`, "admin@example.com", "wrong-password-x")).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await postLogin(`${b!.url}/api`, "admin@example.com", "wrong-password-x")).status).toBe(401);
    expect((await postLogin(`${a!.url}/api`, "admin@example.com", ADMIN_PASSWORD)).status).toBe(429);
    expect((await postLogin(`${b!.url}/api`, "admin@example.com", ADMIN_PASSWORD)).status).toBe(429);
  });

  it("a session made by one process is revoked for the other by logout", async () => {
    const fresh = openUserStore(dataDir);
    await fresh.create({ email: "second@example.com", password: USER_PASSWORD, systemRole: "user" });
    fresh.close();
    const login = await postLogin(`${a!.url}/api`, "second@example.com", USER_PASSWORD);
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().map((l) => l.split(";")[0]).join("; ");
    expect((await fetch(`${b!.url}/api/v1/auth/me`, { headers: { cookie } })).status).toBe(200);
    const csrf = /csrf_token=([^;]+)/.exec(cookie)![1]!;
    expect((await fetch(`${a!.url}/api/v1/auth/logout`, { method: "POST", headers: { cookie, "x-csrf-token": csrf } })).status).toBe(200);
    expect((await fetch(`${b!.url}/api/v1/auth/me`, { headers: { cookie } })).status).toBe(401);
  });
});
