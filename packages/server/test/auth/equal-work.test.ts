import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/** Every scrypt derivation the account store runs, with its cost parameters. */
const derivations: Array<{ N: number; r: number; p: number; keyLen: number }> = [];

vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  const scrypt = (pw: unknown, salt: unknown, keyLen: number, opts: { N: number; r: number; p: number }, cb: unknown) => {
    derivations.push({ N: opts.N, r: opts.r, p: opts.p, keyLen });
    return (real.scrypt as unknown as (...a: unknown[]) => void)(pw, salt, keyLen, opts, cb);
  };
  return { ...real, default: { ...real, scrypt }, scrypt };
});

const { openUserStore } = await import("../../src/auth");

describe("an unknown email costs the same work as a wrong password", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "auth-equal-"));
  const store = openUserStore(dir);
  beforeAll(async () => {
    await store.create({ email: "a@example.org", password: "a-long-enough-passphrase", systemRole: "user" });
    await store.create({ email: "oidc@example.org", systemRole: "user", oauthProvider: "corp", oauthSubject: "s" });
    // the dummy hash is made once, on first use: make it before counting
    await store.verifyCredentials("warm-up@example.org", "x");
  });
  afterAll(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function work(email: string): Promise<typeof derivations> {
    derivations.length = 0;
    expect(await store.verifyCredentials(email, "wrong-password-123")).toBeNull();
    return [...derivations];
  }

  it("one scrypt derivation with the same parameters for a wrong password, an unknown email and a password-less account", async () => {
    const wrong = await work("a@example.org");
    expect(wrong).toEqual([{ N: 32768, r: 8, p: 1, keyLen: 32 }]);
    expect(await work("nobody@example.org")).toEqual(wrong);
    expect(await work("oidc@example.org")).toEqual(wrong);
  });
});
