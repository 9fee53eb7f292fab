import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addUser, initializeAdmin, signIn, startAuthGateway, USER_PASSWORD } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";

describe("admin account management", () => {
  let gw: AuthGateway;
  let admin: SignedIn;
  let user: SignedIn;
  beforeAll(async () => {
    gw = await startAuthGateway();
    admin = await initializeAdmin(gw.api);
    user = await addUser(admin, "user@example.com");
  });
  afterAll(async () => {
    await gw.close();
  });

  it("lists accounts for admins only; a user gets 403", async () => {
    const list = await admin.json("GET", "/v1/auth/users");
    expect(list.users.map((u: { email: string }) => u.email)).toEqual(["admin@example.com", "user@example.com"]);
    expect(Object.keys(list.users[0]).sort()).toEqual(["created_at", "email", "id", "needs_setup", "oauth_provider", "system_role"]);
    const refused = await user.send("GET", "/v1/auth/users");
    expect(refused.status).toBe(403);
    expect((await user.send("POST", "/v1/auth/users", { email: "x@example.com", password: USER_PASSWORD })).status).toBe(403);
  });

  it("an admin creates accounts; duplicates (any case) are 400, weak passwords 422", async () => {
    expect((await admin.send("POST", "/v1/auth/users", { email: "USER@example.com", password: USER_PASSWORD })).status).toBe(400);
    expect((await admin.send("POST", "/v1/auth/users", { email: "w@example.com", password: "password1" })).status).toBe(422);
  });

  it("an admin makes a second admin, who can then demote the first; the last admin cannot be demoted (409)", async () => {
    const second = await admin.json("POST", "/v1/auth/users", { email: "second@example.com", password: USER_PASSWORD, system_role: "user" }, 201);
    expect((await user.send("PATCH", `/v1/auth/users/${second.id}`, { system_role: "admin" })).status).toBe(403);
    expect((await admin.json("PATCH", `/v1/auth/users/${second.id}`, { system_role: "admin" })).system_role).toBe("admin");
    const s2 = await signIn(gw.api, "second@example.com", USER_PASSWORD);
    expect((await s2.json("GET", "/v1/auth/me")).system_role).toBe("admin");
    const firstId = (await admin.json("GET", "/v1/auth/me")).id;
    await s2.json("PATCH", `/v1/auth/users/${firstId}`, { system_role: "user" });
    // the role change shows on the next request of the demoted admin's existing session
    expect((await admin.send("GET", "/v1/auth/users")).status).toBe(403);
    const last = await s2.send("PATCH", `/v1/auth/users/${second.id}`, { system_role: "user" });
    expect(last.status).toBe(409);
    expect((await last.json()).detail).toMatchObject({ code: "last_admin", message: expect.stringContaining("only admin") });
    const del = await s2.send("DELETE", `/v1/auth/users/${second.id}`);
    expect(del.status).toBe(409);
    expect(gw.users.countAdmins()).toBe(1);
  });

  it("unknown ids are 404", async () => {
    const admins = gw.users.list().filter((u) => u.systemRole === "admin");
    const s = await signIn(gw.api, admins[0]!.email, admins[0]!.email === "admin@example.com" ? "correct-horse-battery" : USER_PASSWORD);
    expect((await s.send("PATCH", "/v1/auth/users/nope", { system_role: "user" })).status).toBe(404);
    expect((await s.send("DELETE", "/v1/auth/users/nope")).status).toBe(404);
  });
});
