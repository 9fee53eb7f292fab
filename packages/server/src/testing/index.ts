/**
 * `@deerflow-ts/server/testing`: test doubles of what the gateway talks to.
 * Test code only; nothing in the gateway imports it.
 */
export { DEFAULT_OIDC_TEST_CLIENT, startOidcProvider } from "./oidc-provider";
export type { OidcFault, OidcProvider, OidcProviderOptions, OidcTestClient, OidcTestUser, RecordedOidcRequest } from "./oidc-provider";
export { startTelegramDouble } from "./channels/telegram-double";
export type { TelegramBotMessage, TelegramCall, TelegramDouble, TelegramFault, TelegramSentDocument, TelegramUserMessage } from "./channels/telegram-double";
export { Recorder } from "./channels/http-double";
