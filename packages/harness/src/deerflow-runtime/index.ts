export { DeerFlowRuntime } from "./runtime";
export { RunRecorder } from "./run-recorder";
export type { FinishedRun, RunEnd, RunHook, StartedRun } from "./run-recorder";
export type { AgentBuildRequest, AgentFactory, CloseHook, DeerFlowRuntimeOptions, RunSettings, ThreadDeletedHook } from "./types";
