export { startScriptedLLMServer } from "./server";
export type { ScriptedLLMServer, ScriptedLLMServerOptions } from "./server";
export { runScriptedLLMServerCli, parseScriptedServerArgs } from "./cli";
export type { ScriptedServerCliArgs } from "./cli";
export { echoStep } from "./echo-script";
export { redactHeaders, redactSecret, isFault } from "./script";
export type { HttpFaultKind, HttpScriptStep, HttpScriptedFault, HttpScriptedResponse, HttpScriptedToolCall, RecordedLLMRequest } from "./script";
export { SCRIPTED_THINKING_SIGNATURE } from "./anthropic-wire";
