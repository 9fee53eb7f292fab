export { describeScriptStep, ScriptedModel, ScriptIncompleteError } from "./scripted-model";
export type { ScriptedError, ScriptedModelOptions, ScriptedResponse, ScriptedToolCall, ScriptStep } from "./scripted-model";
export { startScriptedLLMServer, runScriptedLLMServerCli, echoStep, demoStep, demoReportPath, DEMO_CONFIGURE_COMMAND, DEMO_REPORT_PATH, hashedEmbedding, SCRIPTED_EMBEDDING_DIMS } from "./scripted-http";
export type { ScriptedEmbedFn } from "./scripted-http";
export type {
  ScriptedLLMServer,
  ScriptedLLMServerOptions,
  HttpScriptStep,
  HttpScriptedResponse,
  HttpScriptedFault,
  RecordedLLMRequest,
} from "./scripted-http";
export { startProviderDouble, startPageServer, startDoubleServer, jsonReply, buildTestPdf, DEFAULT_SEARCH_RESULTS, DEFAULT_IMAGE_RESULTS } from "./web-doubles";
export type { WebDouble, WebDoubleFault, WebDoubleProvider, ProviderDoubleOptions, DoubleSearchResult, DoubleImageResult, RecordedWebRequest, DoubleReply, DoubleHandler, PageRoute } from "./web-doubles";
export { startOAuthTokenServer } from "./oauth";
export type { OAuthTokenServer, OAuthTokenServerOptions, RecordedTokenRequest } from "./oauth";
export { startPostgres, startRedis, freePort, LocalServerUnavailableError, freshPostgresDatabase } from "./services";
export type { LocalServer, FreshDatabase } from "./services";
