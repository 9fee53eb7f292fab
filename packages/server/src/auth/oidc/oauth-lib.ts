/** The oauth4webapi module's type, for the helpers that are handed the loaded module. */
export type OauthLib = typeof import("oauth4webapi");

let oauthModule: Promise<OauthLib> | undefined;

/**
 * oauth4webapi, imported by the first OIDC sign-in (discovery, redirect or callback): a gateway without
 * `auth.oidc` providers, or whose users have not used single sign-on yet, does not hold it in memory. Every
 * route and protocol step that needs it is already async, so the import is awaited once and then shared.
 */
export function loadOauth(): Promise<OauthLib> {
  oauthModule ??= import("oauth4webapi");
  return oauthModule;
}
