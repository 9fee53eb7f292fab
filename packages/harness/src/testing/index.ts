export { ScriptedModel } from "./scripted-model";
export type { ScriptedError, ScriptedModelOptions, ScriptedResponse, ScriptedToolCall, ScriptStep } from "./scripted-model";
export { startScriptedLLMServer, runScriptedLLMServerCli, echoStep } from "./scripted-http";
export type {
  ScriptedLLMServer,
  ScriptedLLMServerOptions,
  HttpScriptStep,
  HttpScriptedResponse,
  HttpScriptedFault,
  RecordedLLMRequest,
} from "./scripted-http";
