import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/http";
import type { AuthUser, SetupStatus } from "../../src/auth/api";
import { decideStart, isAuthDisabledUser } from "../../src/auth/session";

const ORIGIN = "http://127.0.0.1:2026";
const DEFAULT_ADMIN: AuthUser = { id: "default", email: "default@test.local", system_role: "admin", needs_setup: false, oauth_provider: null };
const ALICE: AuthUser = { id: "5b0c1c52-5a7e-4d5e-9a57-3b8f6f1f2a10", email: "alice@example.com", system_role: "user", needs_setup: false, oauth_provider: null };

function probe(me: AuthUser | Error, setup: SetupStatus | Error = { needs_setup: false, registration_enabled: false }) {
  return {
    me: async () => {
      if (me instanceof Error) throw me;
      return me;
    },
    setupStatus: async () => {
      if (setup instanceof Error) throw setup;
      return setup;
    },
  };
}

describe("what the app does when it opens", () => {
  it("auth-disabled mode: the default admin opens the app, with sign-in off", async () => {
    expect(isAuthDisabledUser(DEFAULT_ADMIN)).toBe(true);
    expect(await decideStart(probe(DEFAULT_ADMIN), "/", ORIGIN)).toEqual({ kind: "app", session: { user: DEFAULT_ADMIN, authEnabled: false } });
  });

  it("a signed-in account opens the app with sign-in on", async () => {
    expect(isAuthDisabledUser(ALICE)).toBe(false);
    // An admin whose email happens to be at test.local is still a real account (its id is not the email's local part).
    expect(isAuthDisabledUser({ ...ALICE, system_role: "admin", email: "default@test.local" })).toBe(false);
    expect(await decideStart(probe(ALICE), "/", ORIGIN)).toEqual({ kind: "app", session: { user: ALICE, authEnabled: true } });
  });

  it("401 → login, keeping where the user was", async () => {
    const d = await decideStart(probe(new ApiError(401, "not signed in", "not_authenticated")), "/?thread=t1#/memory", ORIGIN);
    expect(d).toEqual({ kind: "redirect", to: "/login?next=%2F%3Fthread%3Dt1%23%2Fmemory" });
  });

  it("401 while no admin exists → first-run setup", async () => {
    const d = await decideStart(probe(new ApiError(401, "x"), { needs_setup: true, registration_enabled: false }), "/", ORIGIN);
    expect(d).toEqual({ kind: "redirect", to: "/setup" });
  });

  it("401 and setup-status failing → still the login page", async () => {
    expect(await decideStart(probe(new ApiError(401, "x"), new Error("down")), "/", ORIGIN)).toEqual({ kind: "redirect", to: "/login" });
  });

  it("an account still marked needs_setup finishes its setup first", async () => {
    expect(await decideStart(probe({ ...ALICE, needs_setup: true }), "/", ORIGIN)).toEqual({ kind: "redirect", to: "/setup" });
  });

  it("an unreachable server is an error with the reason, not a login loop", async () => {
    const d = await decideStart(probe(new TypeError("Failed to fetch")), "/", ORIGIN);
    expect(d).toEqual({ kind: "error", message: "The server could not be reached: Failed to fetch" });
    expect((await decideStart(probe(new ApiError(502, "Bad gateway")), "/", ORIGIN)).kind).toBe("error");
  });
});
