import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

  it("change-password's current-password check is capped the same way when guesses arrive at once", async () => {
    const guesses = Array.from({ length: 15 }, (_, i) =>
      admin.send("POST", "/v1/auth/change-password", { current_password: `wrong-password-${i}`, new_password: "brand-new-passphrase" }),
    );
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(MAX_LOGIN_FAILURES);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15 - MAX_LOGIN_FAILURES);
  });
});
