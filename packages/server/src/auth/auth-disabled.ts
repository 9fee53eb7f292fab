import type { RequestUser } from "./request-user";

/**
 * The caller of every request in auth-disabled mode: DeerFlow's synthetic
 * admin (`me` answers exactly `{id: "default", email: "default@test.local",
 * system_role: "admin", needs_setup: false, oauth_provider: null}`).
 */
export function authDisabledUser(userId = "default"): RequestUser {
  return { id: userId, email: `${userId}@test.local`, systemRole: "admin", needsSetup: false, oauthProvider: null, source: "disabled" };
}
