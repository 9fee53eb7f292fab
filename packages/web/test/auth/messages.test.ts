import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/http";
import { loginErrorText, newPasswordProblem, ssoErrorText } from "../../src/auth/messages";

describe("auth page messages", () => {
  it("says the same for a wrong password and an unknown account (401)", () => {
    expect(loginErrorText(new ApiError(401, "Incorrect email or password", "invalid_credentials"))).toBe("Incorrect email or password.");
  });

  it("explains the lockout (429), with the wait when Retry-After is given", () => {
    expect(loginErrorText(new ApiError(429, "Too many attempts", undefined, 300))).toBe("Too many failed sign-in attempts for this account. Try again in 5 minutes.");
    expect(loginErrorText(new ApiError(429, "Too many attempts", undefined, 42))).toMatch(/Try again in 1 minute\.$/);
    expect(loginErrorText(new ApiError(429, "Too many attempts"))).toMatch(/Try again later\.$/);
  });

  it("names an unreachable server instead of blaming the password", () => {
    expect(loginErrorText(new TypeError("Failed to fetch"))).toBe("The server could not be reached: Failed to fetch");
  });

  it("maps the SSO callback's error codes", () => {
    expect(ssoErrorText(null)).toBeUndefined();
    expect(ssoErrorText("sso_not_allowed")).toMatch(/not allowed/);
    expect(ssoErrorText("anything")).toMatch(/Single sign-on failed/);
  });

  it("checks a new password before sending it", () => {
    expect(newPasswordProblem("short", "short")).toMatch(/at least 8/);
    expect(newPasswordProblem("long enough 1", "long enough 2")).toMatch(/do not match/);
    expect(newPasswordProblem("long enough", "long enough")).toBeUndefined();
  });
});
