import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { authDbPath, throttleAddressKey } from "../../src/auth";
import { MAX_LOGIN_FAILURES } from "../../src/auth/login-throttle";
import { ADMIN_PASSWORD, initializeAdmin, postLogin, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";

describe("login throttling under attack", () => {
  let gw: AuthGateway;
  let admin: SignedIn;
  beforeEach(async () => {
    gw = await startAuthGateway();
    admin = await initializeAdmin(gw.api);
  });
  afterEach(async () => {
    await gw.close();
  });

  it("many guesses sent at once get no more than 5 password checks (the count is taken before the slow hash, not after)", async () => {
    const guesses = Array.from({ length: 20 }, (_, i) => postLogin(gw.api, "admin@example.com", `wrong-password-${i}`));
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(MAX_LOGIN_FAILURES);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20 - MAX_LOGIN_FAILURES);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(429);
  });

  it("the right password among many parallel guesses does not get in once the pair is used up", async () => {
    const guesses = Array.from({ length: 12 }, (_, i) => postLogin(gw.api, "admin@example.com", i === 10 ? ADMIN_PASSWORD : `wrong-password-${i}`));
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    expect(statuses[10]).toBe(429);
  });

  it("a login name longer than any email is refused without a failure row of its size (the table cannot be grown 64 KiB a guess)", async () => {
    const huge = `${"x".repeat(60_000)}@example.com`;
    for (let i = 0; i < 3; i++) {
      const res = await postLogin(gw.api, `${i}${huge}`, "wrong-password-x");
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: { code: "invalid_credentials", message: "Incorrect email or password" } });
    }
    const db = new Database(authDbPath(gw.gateway.options.dataDir), { readonly: true });
    try {
      const { longest } = db.prepare("SELECT COALESCE(MAX(LENGTH(account)), 0) AS longest FROM login_failures").get() as { longest: number };
      expect(longest).toBeLessThanOrEqual(320);
    } finally {
      db.close();
    }
  });

  it("change-password's current-password check is capped the same way when guesses arrive at once", async () => {
    const guesses = Array.from({ length: 15 }, (_, i) =>
      admin.send("POST", "/v1/auth/change-password", { current_password: `wrong-password-${i}`, new_password: "brand-new-passphrase" }),
    );
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(MAX_LOGIN_FAILURES);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15 - MAX_LOGIN_FAILURES);
  });
});

describe("login throttling behind a trusted proxy: address spellings", () => {
  let gw: AuthGateway;
  beforeEach(async () => {
    gw = await startAuthGateway({ trustedProxies: "127.0.0.1/8, ::1" });
    await initializeAdmin(gw.api);
  });
  afterEach(async () => {
    await gw.close();
  });

  const login = (password: string, ip: string) => postLogin(gw.api, "admin@example.com", password, {}, { "x-real-ip": ip });

  it("an IPv6 client rotating addresses inside its own /64 stays one client", async () => {
    // one host usually holds a whole /64: a fresh address per guess costs it nothing
    for (let i = 1; i <= 5; i++) expect((await login("wrong-password-x", `2001:db8:1:2::${i.toString(16)}`)).status).toBe(401);
    expect((await login(ADMIN_PASSWORD, "2001:db8:1:2:ffff:ffff:ffff:ffff")).status).toBe(429);
    // another /64 is another client
    expect((await login(ADMIN_PASSWORD, "2001:db8:1:3::1")).status).toBe(200);
  });

  it("an IPv4 address and its IPv4-mapped IPv6 spelling are one client", async () => {
    for (let i = 0; i < 3; i++) await login("wrong-password-x", "198.51.100.4");
    for (let i = 0; i < 2; i++) await login("wrong-password-x", "::ffff:198.51.100.4");
    expect((await login(ADMIN_PASSWORD, "198.51.100.4")).status).toBe(429);
    expect((await login(ADMIN_PASSWORD, "::ffff:c633:6404")).status).toBe(429);
  });
});

describe("throttleAddressKey", () => {
  it("writes every spelling of one client the same way", () => {
    expect(throttleAddressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(throttleAddressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(throttleAddressKey("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(throttleAddressKey("2001:DB8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(throttleAddressKey("2001:db8:0:1:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(throttleAddressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(throttleAddressKey("::1")).toBe("0:0:0:0::/64");
    expect(throttleAddressKey("::")).toBe("0:0:0:0::/64");
    expect(throttleAddressKey("unknown")).toBe("unknown");
  });
});
