export { buildSystemPrompt, escapePromptData } from "./prompt";
export type { PromptMount, PromptSkill, SystemPromptOptions } from "./prompt";
export { readRuntimeOptions, runSettings } from "./runtime-options";
export type { LeadRuntimeOptions } from "./runtime-options";
export { assembleConfiguredTools, builtinToolUses, dedupeTools, DEFAULT_TOOL_ENTRIES, toolEntriesOrDefault } from "./tool-assembly";
export type { AssembleToolsOptions, ToolConfigEntry } from "./tool-assembly";
export {
  AGENT_NAME_PATTERN,
  SOUL_FILENAME,
  createCustomAgent,
  customAgentExists,
  customAgentSignature,
  deleteCustomAgent,
  isLegacyOnlyAgent,
  listCustomAgents,
  loadCustomAgent,
  normalizeAgentName,
  unmanagedAgentFields,
  updateCustomAgent,
  userAgentDir,
} from "./custom-agent";
export type { AgentDeleteOutcome, CustomAgentConfig, CustomAgentDocument } from "./custom-agent";
export { AGENTS_COMPONENT, AGENTS_MIGRATIONS, agentStorageBackend, FileAgentStore, importFileAgents, openAgentStore, PostgresAgentRows, SqlAgentStore, SqliteAgentRows } from "./store";
export type { AgentImportOutcome, AgentRowDb, AgentStore, AgentStoreKind, OpenAgentStoreOptions } from "./store";
export { SETUP_AGENT_TOOL_NAME, UPDATE_AGENT_TOOL_NAME, createSetupAgentTool, createUpdateAgentTool } from "./agent-tools";
export type { AgentToolsOptions } from "./agent-tools";
export { resolveGuardrailProvider } from "./guardrail-provider";
export { buildLeadMiddlewares, createSharedLeadMiddlewares } from "./lead-middlewares";
export type { LeadMiddlewareInputs, SharedLeadMiddlewares } from "./lead-middlewares";
export { createLeadAgentFactory } from "./lead-agent";
export type { ConfigSource, LeadAgent, LeadAgentExtensions, LeadAgentFactory, LeadAgentFactoryOptions } from "./lead-agent";
export { createDeerflowAgent } from "./factory";
export type { CreateDeerflowAgentOptions, ExtraMiddleware, RuntimeFeatures } from "./factory";
export { MIDDLEWARE_ORDER, orderChain } from "./chain-order";
