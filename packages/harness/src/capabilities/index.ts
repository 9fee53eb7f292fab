export { CHAIN_ORDER, placeInChain, SLOT, slotOfName } from "./chain-slots";
export type { ChainSlot, ChainSlots, DeerFlowMiddlewareName, SlottedMiddleware } from "./chain-slots";
export { attachCapabilities } from "./attach";
export type { CapabilityRuntime } from "./attach";
export { agentParts, arrangeTools, partMiddlewares, partPromptSections, partTools } from "./agent-parts";
export { LEAD_CAPABILITIES } from "./registry";
export type { LeadCapabilityServices } from "./registry";
export { memoryCapability } from "./memory";
export { mcpCapability } from "./mcp";
export { skillsCapability } from "./skills";
export { subagentsCapability } from "./subagents";
export { webResearchCapability } from "./web-research";
export type {
  AgentBuildContext,
  AgentPart,
  AnyCapability,
  Capability,
  CapabilityAttachment,
  CapabilityAttachOptions,
  CapabilityHost,
  CapabilityRunHook,
  ChainForm,
  ConfigToolProvider,
  PromptSections,
  ServicesOf,
} from "./types";
