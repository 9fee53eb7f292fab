export type { AgentState, Channel, StateSchema, StateUpdate } from "./channels";
export { applyUpdate, baseStateSchema, initialState, lastValue, mergeSchemas } from "./channels";
export { addMessages } from "./add-messages";
export { Command, isCommand } from "./command";
export type { CommandGoto } from "./command";
export {
  keepIfNull,
  MAX_DELEGATIONS,
  MAX_SKILL_CONTEXT,
  mergeArtifacts,
  mergeDelegations,
  mergePromoted,
  mergeSandbox,
  mergeSkillContext,
  mergeTodos,
  mergeViewedImages,
  TERMINAL_DELEGATION_STATUSES,
  threadStateSchema,
} from "./thread-state";
export type {
  DelegationEntry,
  PromotedState,
  SandboxState,
  SkillContextEntry,
  ThreadDataState,
  ThreadState,
  Todo,
  ViewedImage,
} from "./thread-state";
