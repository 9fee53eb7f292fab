import { isAuthError } from "../errors";
import type { SystemRole } from "../request-user";
import type { AccountStore } from "../account-store";
import type { UserRecord } from "../user-store";
import { OidcError } from "./errors";
import type { OidcIdentity, OidcProviderConfig } from "./protocol";

/** The part of the account store single sign-on uses. */
export type OidcUserStore = Pick<AccountStore, "getByOauth" | "getByEmail" | "create">;

/** The outcome of {@link provisionOidcUser}. */
export interface ProvisionedUser {
  user: UserRecord;
  /** True when this sign-in created the account. */
  created: boolean;
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/**
 * The account an OIDC identity signs in as, under the provider entry's policy:
 *
 * 1. `require_verified_email` and `allowed_email_domains` are checked at every
 *    sign-in (not only the first), so narrowing them locks out accounts that
 *    no longer qualify.
 * 2. An account is found only by its link, the pair (provider id, `sub`).
 *    Emails are never used to link: an identity whose email already belongs
 *    to another account (a local password account or one linked to another
 *    provider) is refused with `oidc.account_exists`, so whoever controls an
 *    address at some provider cannot take over the DeerFlow account that
 *    uses it. An admin links such accounts deliberately.
 * 3. Unknown identities get an account only with `auto_create_users`.
 * 4. New accounts are `admin` when their email is in `admin_emails` and the
 *    provider verified it (an unverified claim of an admin's address never
 *    grants admin, even with `require_verified_email: false`); else `user`.
 *    The role is decided once: later changes are the admins' (`set-role`).
 *
 * @throws OidcError `oidc.not_allowed`, `oidc.account_exists`.
 */
export async function provisionOidcUser(store: OidcUserStore, providerId: string, cfg: OidcProviderConfig, identity: OidcIdentity): Promise<ProvisionedUser> {
  const email = identity.email.toLowerCase();
  if (cfg.require_verified_email && !identity.emailVerified) {
    throw new OidcError("oidc.not_allowed", `OIDC provider '${providerId}' did not verify the email of subject ${JSON.stringify(identity.subject)}, and require_verified_email is on.`);
  }
  if (cfg.allowed_email_domains.length > 0) {
    const allowed = new Set(cfg.allowed_email_domains.map((d) => d.trim().toLowerCase().replace(/^@/, "")));
    if (!email || !allowed.has(domainOf(email))) {
      throw new OidcError("oidc.not_allowed", `OIDC sign-in of ${JSON.stringify(email || identity.subject)} via '${providerId}' refused: the domain is not in allowed_email_domains.`);
    }
  }
  const linked = await store.getByOauth(providerId, identity.subject);
  if (linked) return { user: linked, created: false };
  if (!email) throw new OidcError("oidc.not_allowed", `OIDC provider '${providerId}' gave no email for subject ${JSON.stringify(identity.subject)} (is the 'email' scope configured?).`);
  if (await store.getByEmail(email)) {
    throw new OidcError("oidc.account_exists", `OIDC sign-in via '${providerId}' refused: an account with the email ${JSON.stringify(email)} already exists and is not linked to this identity.`);
  }
  if (!cfg.auto_create_users) {
    throw new OidcError("oidc.not_allowed", `OIDC sign-in of ${JSON.stringify(email)} via '${providerId}' refused: no account is linked to it and auto_create_users is off.`);
  }
  const isAdminEmail = cfg.admin_emails.some((e) => e.trim().toLowerCase() === email);
  const systemRole: SystemRole = isAdminEmail && identity.emailVerified ? "admin" : "user";
  try {
    const user = await store.create({ email, systemRole, needsSetup: false, oauthProvider: providerId, oauthSubject: identity.subject });
    return { user, created: true };
  } catch (err) {
    if (isAuthError(err, "auth.email_exists")) {
      // A concurrent callback of the same identity (double click) created it first: that account is this one.
      const winner = await store.getByOauth(providerId, identity.subject);
      if (winner) return { user: winner, created: false };
      throw new OidcError("oidc.account_exists", `OIDC sign-in via '${providerId}' refused: the email ${JSON.stringify(email)} was just taken by another account.`);
    }
    if (isAuthError(err, "auth.invalid_email")) throw new OidcError("oidc.not_allowed", `OIDC provider '${providerId}' gave an unusable email ${JSON.stringify(email)}.`);
    throw err;
  }
}
