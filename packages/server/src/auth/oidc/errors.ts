import { DeerFlowError } from "@deerflow-ts/harness";

/** Stable codes of {@link OidcError}. */
export type OidcErrorCode =
  /** The provider's discovery document could not be fetched or does not fit the configured issuer. */
  | "oidc.discovery_failed"
  /** The provider entry cannot work as configured (e.g. no client secret for `client_secret_post`). */
  | "oidc.misconfigured"
  /** The token endpoint refused the code or answered something that is not a token response. */
  | "oidc.token_exchange_failed"
  /** The ID token failed a check: signature, issuer, audience, expiry or nonce. */
  | "oidc.id_token_invalid"
  /** The provider redirected back with `error=…` (the user cancelled, the provider refused). */
  | "oidc.provider_error"
  /** Provisioning policy refused the identity (unverified email, foreign domain, no auto-creation). */
  | "oidc.not_allowed"
  /** The identity's email belongs to another account, which is never taken over silently. */
  | "oidc.account_exists";

/**
 * A single-sign-on step that failed. The message is for the server log; the
 * browser only ever sees the `/login?error=…` code the route derives from
 * {@link OidcError.code}.
 */
export class OidcError extends DeerFlowError {
  declare readonly code: OidcErrorCode;

  constructor(code: OidcErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
