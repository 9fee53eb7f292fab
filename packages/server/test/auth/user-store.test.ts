import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuthError, hashPassword, openUserStore, passwordProblem, verifyPassword } from "../../src/auth";
import type { UserStore } from "../../src/auth";

const PW = "a-long-enough-passphrase";

describe("UserStore", () => {
  let dir: string;
  let store: UserStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "auth-store-"));
    store = openUserStore(dir);
  });
  afterEach(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("auth.db and its WAL files are readable by the service's user only, also when an older file was open to all", async () => {
    await store.create({ email: "mode@example.com", password: PW, systemRole: "user" });
    const mode = (f: string) => fs.statSync(path.join(dir, f)).mode & 0o777;
    expect(mode("auth.db")).toBe(0o600);
    for (const f of ["auth.db-wal", "auth.db-shm"]) if (fs.existsSync(path.join(dir, f))) expect(mode(f)).toBe(0o600);
    store.close();
    fs.chmodSync(path.join(dir, "auth.db"), 0o644);
    store = openUserStore(dir);
    expect(mode("auth.db")).toBe(0o600);
    expect(store.getByEmail("mode@example.com")).toBeTruthy();
  });

  it("an account read once is read again after another handle (another process, the CLI) changes it", async () => {
    const u = await store.create({ email: "cache@example.com", password: PW, systemRole: "user" });
    expect(store.getById(u.id)!.tokenVersion).toBe(0); // now cached by this handle
    const other = openUserStore(dir);
    try {
      other.bumpTokenVersion(u.id); // a logout in another gateway process
      expect(store.getById(u.id)!.tokenVersion).toBe(1);
      await other.setPassword(u.id, "yet-another-passphrase");
      expect(store.getById(u.id)!.tokenVersion).toBe(2);
      const admin = await store.create({ email: "cache-admin@example.com", password: PW, systemRole: "admin" });
      expect(store.getById(admin.id)!.systemRole).toBe("admin");
      other.setRole(u.id, "admin");
      other.setRole(admin.id, "user");
      expect(store.getById(admin.id)!.systemRole).toBe("user");
      expect(store.getById(u.id)!.systemRole).toBe("admin");
      other.delete(admin.id);
      expect(store.getById(admin.id)).toBeUndefined();
    } finally {
      other.close();
    }
  });

  it("this handle's own writes are seen at once by its next read", async () => {
    const u = await store.create({ email: "own@example.com", password: PW, systemRole: "user" });
    expect(store.getById(u.id)!.tokenVersion).toBe(0);
    store.bumpTokenVersion(u.id);
    expect(store.getById(u.id)!.tokenVersion).toBe(1);
    expect(await store.setPassword(u.id, "yet-another-passphrase")).toBe(2);
    expect(store.getById(u.id)!.tokenVersion).toBe(2);
    store.setEmail(u.id, "renamed@example.com");
    expect(store.getById(u.id)!.email).toBe("renamed@example.com");
    store.linkOauth(u.id, "okta", "sub-1");
    expect(store.getById(u.id)!.oauthProvider).toBe("okta");
    store.setRole(u.id, "admin");
    expect(store.getById(u.id)!.systemRole).toBe("admin");
  });

  it("keeps emails unique case-insensitively and finds them in any case", async () => {
    const u = await store.create({ email: "Alice@Example.org", password: PW, systemRole: "user" });
    expect(store.getByEmail("alice@example.ORG")?.id).toBe(u.id);
    await expect(store.create({ email: "ALICE@example.org", password: PW, systemRole: "user" })).rejects.toMatchObject({ code: "auth.email_exists" });
  });

  it("stores a salted scrypt hash, never the password", async () => {
    await store.create({ email: "a@example.org", password: PW, systemRole: "user" });
    store.close();
    const raw = fs.readFileSync(path.join(dir, "auth.db"));
    expect(raw.includes(Buffer.from(PW))).toBe(false);
    store = openUserStore(dir);
    const h1 = await hashPassword(PW);
    const h2 = await hashPassword(PW);
    expect(h1).not.toBe(h2);
    expect(h1).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword(PW, h1)).toBe(true);
    expect(await verifyPassword(PW + "x", h1)).toBe(false);
    expect(await verifyPassword(PW, "scrypt$garbage")).toBe(false);
  });

  it("verifyCredentials: right password → account; wrong or unknown → null", async () => {
    await store.create({ email: "a@example.org", password: PW, systemRole: "user" });
    expect((await store.verifyCredentials("A@example.org", PW))?.email).toBe("a@example.org");
    expect(await store.verifyCredentials("a@example.org", "wrong-password")).toBeNull();
    expect(await store.verifyCredentials("b@example.org", PW)).toBeNull();
    // an OIDC-only account has no password to match
    await store.create({ email: "o@example.org", systemRole: "user", oauthProvider: "corp", oauthSubject: "s1" });
    expect(await store.verifyCredentials("o@example.org", "")).toBeNull();
    expect(store.getByOauth("corp", "s1")?.email).toBe("o@example.org");
  });

  it("refuses demoting or deleting the last admin with a typed error", async () => {
    const a = await store.create({ email: "a@example.org", password: PW, systemRole: "admin" });
    const err = (() => {
      try {
        store.setRole(a.id, "user");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).code).toBe("auth.last_admin");
    expect(() => store.delete(a.id)).toThrow(/only admin/);
    const b = await store.create({ email: "b@example.org", password: PW, systemRole: "user" });
    store.setRole(b.id, "admin");
    expect(store.setRole(a.id, "user").systemRole).toBe("user");
    expect(store.countAdmins()).toBe(1);
  });

  it("setPassword and bumpTokenVersion raise the token version", async () => {
    const a = await store.create({ email: "a@example.org", password: PW, systemRole: "user" });
    expect(a.tokenVersion).toBe(0);
    expect(store.bumpTokenVersion(a.id)).toBe(1);
    expect(await store.setPassword(a.id, "another-passphrase-2")).toBe(2);
    expect(await store.checkPassword(a.id, "another-passphrase-2")).toBe(true);
    await expect(store.setPassword(a.id, "short")).rejects.toMatchObject({ code: "auth.weak_password" });
  });

  it("initializeAdmin from two store handles on one file makes exactly one admin", async () => {
    const other = openUserStore(dir);
    try {
      const results = await Promise.allSettled([
        store.initializeAdmin({ email: "a@example.org", password: PW }),
        other.initializeAdmin({ email: "b@example.org", password: PW }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(rejected.reason).toMatchObject({ code: "auth.already_initialized" });
      expect(other.countAdmins()).toBe(1);
    } finally {
      other.close();
    }
  });

  it("password rule: 8+ characters and not common (case-insensitive)", () => {
    expect(passwordProblem("short")).toMatch(/at least 8/);
    expect(passwordProblem("PASSWORD123")).toMatch(/too common/);
    expect(passwordProblem("a-long-enough-passphrase")).toBeUndefined();
  });
});
