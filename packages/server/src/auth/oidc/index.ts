/** Single sign-on with OpenID Connect providers (`auth.oidc`), on oauth4webapi. */
export { OidcError } from "./errors";
export type { OidcErrorCode } from "./errors";
export { DEFAULT_NEXT_PATH, resolveNextPath, validateNextPath } from "./next-path";
export { OidcDiscovery, METADATA_TTL_MS, PROVIDER_TIMEOUT_MS } from "./protocol";
export type { OidcIdentity, OidcProviderConfig, ResolvedProvider } from "./protocol";
export { provisionOidcUser } from "./provisioning";
export type { OidcUserStore, ProvisionedUser } from "./provisioning";
export { listOidcProviders, OIDC_PROVIDER_ID, registerOidcRoutes } from "./routes";
export type { OidcProviderListing, OidcRouteDeps } from "./routes";
export { OIDC_STATE_COOKIE_PREFIX, OIDC_STATE_MAX_AGE } from "./state-cookie";
