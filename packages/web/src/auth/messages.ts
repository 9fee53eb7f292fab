/** The sentences the auth pages show for the gateway's answers. */
import { ApiError } from "../api/http";

/** Minutes, rounded up, for "try again in N minutes". */
function minutes(seconds: number): string {
  const m = Math.max(1, Math.ceil(seconds / 60));
  return m === 1 ? "1 minute" : `${m} minutes`;
}

/**
 * A failed sign-in: 401 is a wrong email or password (the gateway answers an unknown account the
 * same way, so the page cannot and does not say which); 429 is the lockout after repeated failures.
 */
export function loginErrorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return "Incorrect email or password.";
    if (err.status === 429) {
      const wait = err.retryAfterSeconds ? ` Try again in ${minutes(err.retryAfterSeconds)}.` : " Try again later.";
      return `Too many failed sign-in attempts for this account.${wait}`;
    }
    if (err.status === 403) return `Sign-in refused: ${err.message}`;
    return err.message;
  }
  return `The server could not be reached: ${(err as Error).message}`;
}

/** What `?error=` of the login page means (the SSO callback redirects there when it fails). */
export function ssoErrorText(code: string | null): string | undefined {
  switch (code) {
    case null:
    case "":
      return undefined;
    case "sso_not_allowed":
      return "Single sign-on is not allowed for this account. Ask an administrator.";
    case "sso_account_exists":
      return "An account with this email already exists. Sign in with its password.";
    default:
      return "Single sign-on failed. Try again or sign in with a password.";
  }
}

/** Shortest password the gateway accepts (DeerFlow's rule). */
export const MIN_PASSWORD = 8;

/** Why a new password (with its confirmation) cannot be sent, or `undefined` when it can. */
export function newPasswordProblem(password: string, confirm: string): string | undefined {
  if (password.length < MIN_PASSWORD) return `The password needs at least ${MIN_PASSWORD} characters.`;
  if (password !== confirm) return "The passwords do not match.";
  return undefined;
}
