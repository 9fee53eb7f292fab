export { ScriptedModel } from "./scripted-model";
export type { ScriptedError, ScriptedModelOptions, ScriptedResponse, ScriptedToolCall, ScriptStep } from "./scripted-model";
