import { memoryCapability } from "./memory";
import { mcpCapability } from "./mcp";
import { skillsCapability } from "./skills";
import { subagentsCapability } from "./subagents";
import type { ServicesOf } from "./types";
import { webResearchCapability } from "./web-research";

/**
 * The capabilities of DeerFlow's lead agent, in the order they are attached
 * and asked for their part of an agent. The order is DeerFlow's tool order:
 * memory tools before MCP tools (both after config tools and built-ins),
 * then the `task` tool before `describe_skill`. Closing runs in reverse.
 * Where each middleware goes is its slot's business, not this order's.
 */
export const LEAD_CAPABILITIES = Object.freeze([webResearchCapability, memoryCapability, mcpCapability, subagentsCapability, skillsCapability] as const);

/** The runtime services of the lead agent's capabilities (`runtime.extensions`): `{memory?, mcp?, skills?}`. */
export type LeadCapabilityServices = ServicesOf<typeof LEAD_CAPABILITIES>;
