export { DeerFlowRuntime } from "./runtime";
export { RunRecorder } from "../runs/run-recorder";
export type { FinishedRun, RunEnd, RunHook, StartedRun } from "../runs/run-recorder";
export type { AgentBuildRequest, AgentFactory, CloseHook, DeerFlowRuntimeOptions, RunSettings, ThreadDeletedHook } from "./types";
