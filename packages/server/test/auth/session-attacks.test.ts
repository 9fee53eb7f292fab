import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addUser, initializeAdmin, startAuthGateway, TEST_JWT_SECRET } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";

describe("forged sessions and role races", () => {
  let gw: AuthGateway;
  let admin: SignedIn;
  let adminId: string;
  beforeEach(async () => {
    gw = await startAuthGateway();
    admin = await initializeAdmin(gw.api);
    adminId = (await admin.json("GET", "/v1/auth/me")).id;
  });
  afterEach(async () => {
    await gw.close();
  });

  const me = (jwt: string) => fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: `access_token=${jwt}` } });
  const sign = (alg: string, claims: Record<string, unknown>, secret = TEST_JWT_SECRET) =>
    new SignJWT(claims).setProtectedHeader({ alg }).setSubject(adminId).setIssuedAt(Math.floor(gw.clock.ms / 1000)).setExpirationTime(Math.floor(gw.clock.ms / 1000) + 3600).sign(new TextEncoder().encode(secret));

  it("only an HS256 JWT under the configured secret with an integer ver is a session", async () => {
    const ver = gw.users.getById(adminId)!.tokenVersion;
    expect((await me(await sign("HS256", { ver }))).status).toBe(200);
    // the same secret under another HMAC algorithm, another secret, a ver that only looks right
    for (const jwt of [await sign("HS512", { ver }), await sign("HS384", { ver }), await sign("HS256", { ver }, "another-secret-of-at-least-32-characters"), await sign("HS256", { ver: String(ver) }), await sign("HS256", {})]) {
      const res = await me(jwt);
      expect(res.status).toBe(401);
      expect((await res.json()).detail.code).toBe("token_invalid");
    }
    const none = [Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url"), Buffer.from(JSON.stringify({ sub: adminId, ver, exp: 4_102_444_800 })).toString("base64url"), ""].join(".");
    expect((await me(none)).status).toBe(401);
  });

  it("two admins demoting each other at once leave one admin", async () => {
    const second = await addUser(admin, "second@example.com", undefined, "admin");
    const secondId = (await second.json("GET", "/v1/auth/me")).id;
    const answers = await Promise.all([
      admin.send("PATCH", `/v1/auth/users/${secondId}`, { system_role: "user" }),
      second.send("PATCH", `/v1/auth/users/${adminId}`, { system_role: "user" }),
    ]);
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(gw.users.countAdmins()).toBe(1);
  });

  it("two admins deleting each other at once leave one admin", async () => {
    const second = await addUser(admin, "second@example.com", undefined, "admin");
    const secondId = (await second.json("GET", "/v1/auth/me")).id;
    const answers = await Promise.all([admin.send("DELETE", `/v1/auth/users/${secondId}`), second.send("DELETE", `/v1/auth/users/${adminId}`)]);
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(gw.users.countAdmins()).toBe(1);
  });
});
