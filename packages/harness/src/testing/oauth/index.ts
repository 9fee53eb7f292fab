export { startOAuthTokenServer } from "./token-server";
export type { OAuthTokenServer, OAuthTokenServerOptions, RecordedTokenRequest } from "./token-server";
