export { SubagentError } from "./types";
export type { SubagentConfig, SubagentResult, SubagentStatus } from "./types";
export {
  BASH_SUBAGENT,
  BUILTIN_SUBAGENTS,
  CODER_SUBAGENT,
  GENERAL_PURPOSE_SUBAGENT,
  PLANNER_SUBAGENT,
  RESEARCHER_SUBAGENT,
  REVIEWER_SUBAGENT,
  SUBAGENT_DISALLOWED_TOOLS,
} from "./builtin-types";
export { BASH_SUBAGENT_DISABLED_MESSAGE, customSubagentSchema, mergeSkillAllowlists, resolveSubagentModelName, subagentOverrideSchema, SubagentRegistry } from "./registry";
export type { SubagentRegistryOptions, SubagentsSection } from "./registry";
export {
  boundResultText,
  formatSubagentResultMessage,
  makeSubagentAdditionalKwargs,
  normalizeTokenUsage,
  readSubagentResultMetadata,
  SUBAGENT_ACCEPTANCE_VERDICT_KEY,
  SUBAGENT_ERROR_KEY,
  SUBAGENT_MODEL_NAME_KEY,
  SUBAGENT_RESULT_BRIEF_KEY,
  SUBAGENT_RESULT_SHA256_KEY,
  SUBAGENT_STATUS_KEY,
  SUBAGENT_STATUS_VALUES,
  SUBAGENT_STOP_REASON_KEY,
  SUBAGENT_STOP_REASON_VALUES,
} from "./status-contract";
export type { StructuredSubagentResult, SubagentResultFields, SubagentStatusValue, SubagentStopReasonValue, SubagentTokenUsage } from "./status-contract";
export { DEFAULT_MAX_RUNNING_SUBAGENTS, MIN_MAX_RUNNING_SUBAGENTS, SubagentAdmission, sharedSubagentAdmission } from "./admission";
export { bindRunChild } from "./run-child";
export { CHILD_STOP_GRACE_MS, SubagentExecutor, SUBAGENT_CANCELLED_ERROR } from "./executor";
export type { ExecuteSubagentOptions, SubagentExecutorOptions } from "./executor";
export { PARENT_CONTEXT_SNAPSHOT_NAME, parentContextSnapshotMessage, renderParentContextSnapshot, SNAPSHOT_AUTHORITY_NOTE } from "./context-snapshot";
export type { SnapshotSource } from "./context-snapshot";
export {
  ACCEPTANCE_CHECKLIST_HEADER,
  ACCEPTANCE_PARSE_CAP_BYTES,
  checkAcceptanceCriteria,
  parseCriterion,
  renderAcceptanceChecklist,
  sanitizeAcceptanceCriteria,
  summarizeAcceptance,
} from "./acceptance-checks";
export type { AcceptanceEvidence, AcceptanceFamily, AcceptanceLeaf, AcceptanceVerdict } from "./acceptance-checks";
export { checkTestsPassed, recordedBashExecutions } from "./acceptance-tests-passed";
export type { BashExecution, TestsPassedCheck } from "./acceptance-tests-passed";
export { changedDelegations, countRunDelegations, delegationGuidance, extractDelegations, renderDelegationLedger } from "./delegation-ledger";
export { createTaskTool } from "./task-tool";
export type { ChildAgentFactory, ChildAgentSpec, TaskToolArgs, TaskToolOptions } from "./task-tool";
export { createChildAgentFactory } from "./child-agent";
export type { ChildAgentFactoryOptions } from "./child-agent";
export { createLeadSubagents } from "./lead-setup";
export type { LeadSubagents, LeadSubagentsInput } from "./lead-setup";
