import type { ToolDefinition } from "../tools";
import type { SlottedMiddleware } from "./chain-slots";
import type { AgentBuildContext, AgentPart, AnyCapability, ChainForm, PromptSections } from "./types";

/** Every capability's part of one agent, in capability order (capabilities with nothing to add are left out). */
export async function agentParts(capabilities: readonly AnyCapability[], services: object, ctx: AgentBuildContext): Promise<AgentPart[]> {
  const parts: AgentPart[] = [];
  for (const c of capabilities) {
    const part = await c.forAgent?.(ctx, (services as Record<string, unknown>)[c.name]);
    if (part) parts.push(part);
  }
  return parts;
}

/** The candidate tools of all parts, in order. */
export function partTools(parts: readonly AgentPart[]): ToolDefinition[] {
  return parts.flatMap((p) => p.tools ?? []);
}

/** Let each part rewrite the candidate list, then append the parts' late tools. */
export function arrangeTools(parts: readonly AgentPart[], candidates: ToolDefinition[]): ToolDefinition[] {
  let tools = candidates;
  for (const p of parts) if (p.arrangeTools) tools = p.arrangeTools(tools);
  return [...tools, ...parts.flatMap((p) => p.addTools ?? [])];
}

/** The slotted middlewares of all parts for one form of the chain. */
export function partMiddlewares(parts: readonly AgentPart[], form: ChainForm): SlottedMiddleware[] {
  return parts.flatMap((p) => p.middlewares?.(form) ?? []);
}

/** The prompt sections of all parts (each section belongs to one capability). */
export async function partPromptSections(parts: readonly AgentPart[], tools: readonly ToolDefinition[]): Promise<PromptSections> {
  const out: PromptSections = {};
  for (const p of parts) if (p.promptSections) Object.assign(out, await p.promptSections(tools));
  return out;
}
