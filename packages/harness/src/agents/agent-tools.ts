import { z } from "zod";
import { errorMessage } from "../errors";
import { tool } from "../tools";
import type { RunContext, ToolDefinition } from "../tools";
import { normalizeAgentName, unmanagedAgentFields } from "./custom-agent";
import type { CustomAgentConfig, CustomAgentDocument } from "./custom-agent";
import { FileAgentStore } from "./store/file-store";
import type { AgentStore } from "./store/types";

/** Names of the two agent self-management tools. */
export const SETUP_AGENT_TOOL_NAME = "setup_agent";
export const UPDATE_AGENT_TOOL_NAME = "update_agent";

/** Channels whose messages come from untrusted outsiders: an agent there may not rewrite itself. */
const UNTRUSTED_CHANNELS = new Set(["github"]);

const NULLISH = new Set(["null", "none", "undefined"]);

/** Models often write "null"/"None" for a field they mean to leave alone; treat those as absent. */
function nullish(value: unknown): unknown {
  return typeof value === "string" && NULLISH.has(value.trim().toLowerCase()) ? undefined : value;
}

const optionalText = z.preprocess(nullish, z.string().nullish());
const optionalList = z.preprocess(nullish, z.array(z.string()).nullish());

const setupSchema = z.object({
  soul: z.string().describe("Full SOUL.md content defining the agent's personality and behavior."),
  description: z.string().describe("One-line description of what the agent does."),
  skills: z
    .array(z.string())
    .nullish()
    .describe("Skill names this agent should use. Omit to use all enabled skills; an empty list means no skills."),
});

const updateSchema = z.object({
  soul: optionalText.describe("Full replacement SOUL.md content (no patching: start from the current soul)."),
  description: optionalText.describe("New one-line description."),
  skills: optionalList.describe("Skill whitelist. [] = no skills; omit = unchanged."),
  tool_groups: optionalList.describe("Tool-group whitelist. [] = none; omit = unchanged."),
  model: optionalText.describe("Model override; must be a model name from config.yaml."),
});

/** Options of {@link createSetupAgentTool} and {@link createUpdateAgentTool}. */
export interface AgentToolsOptions {
  /** Runtime home holding `users/{uid}/agents/` (the file store's root when no `store` is given). */
  baseDir: string;
  /** Where agents are read and written (`agent_storage:`); default: the files under `baseDir`. */
  store?: AgentStore;
  /** Configured model names (checked before `update_agent` stores a `model`). */
  modelNames?: () => string[];
}

function fail(content: string) {
  return { content: `Error: ${content}`, status: "error" as const };
}

const storeOf = (options: AgentToolsOptions): AgentStore => options.store ?? new FileAgentStore(options.baseDir);

function contextAgentName(context: RunContext): string | undefined {
  return context.identity.agentName ?? undefined;
}

/**
 * `setup_agent(soul, description, skills?)`: the bootstrap conversation's
 * last step. Persists the agent named by the run's `agent_name` (an upsert,
 * so a retried bootstrap overwrites its own draft).
 */
export function createSetupAgentTool(options: AgentToolsOptions): ToolDefinition<z.output<typeof setupSchema>> {
  return tool({
    name: SETUP_AGENT_TOOL_NAME,
    description:
      "Set up the custom DeerFlow agent being created in this conversation: persist its SOUL.md (personality and " +
      "behaviour), a one-line description and optionally the skills it may use.",
    schema: setupSchema,
    metadata: { group: "builtin" },
    execute: async (args, runtime) => {
      // an empty soul would leave an agent without a personality while reporting success
      if (!args.soul.trim()) return fail("soul content is empty; refusing to create agent with an empty SOUL.md");
      const raw = contextAgentName(runtime.context);
      if (!raw) return fail("setup_agent needs the run's agent_name (start the bootstrap run with context.agent_name)");
      let name: string;
      try {
        name = normalizeAgentName(raw);
        const doc: CustomAgentDocument = { name };
        if (args.description) doc.description = args.description;
        if (args.skills !== undefined && args.skills !== null) doc.skills = args.skills;
        await storeOf(options).update(runtime.context.identity.userId, name, doc, args.soul);
      } catch (err) {
        return fail(errorMessage(err));
      }
      return `Agent '${name}' created successfully!`;
    },
  });
}

/**
 * `update_agent(soul?, description?, skills?, tool_groups?, model?)`: a custom
 * agent refines itself. Only the given fields change; "null"-like strings
 * mean unchanged. Takes effect on the next turn, when the agent is rebuilt.
 */
export function createUpdateAgentTool(options: AgentToolsOptions): ToolDefinition<z.output<typeof updateSchema>> {
  return tool({
    name: UPDATE_AGENT_TOOL_NAME,
    description:
      "Persist updates to the current custom agent's SOUL.md and config. Pass only the fields to change; omit the " +
      "others (do not pass 'null'). `soul` is the FULL replacement content. Changes apply from the next user turn.",
    schema: updateSchema,
    metadata: { group: "builtin" },
    execute: async (args, runtime) => {
      const channel = runtime.context.channel_name;
      if (typeof channel === "string" && UNTRUSTED_CHANNELS.has(channel)) {
        return fail(`update_agent is disabled on the '${channel}' channel; change the agent from the chat UI or the HTTP API.`);
      }
      const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null)) as {
        soul?: string;
        description?: string;
        skills?: string[];
        tool_groups?: string[];
        model?: string;
      };
      if (!Object.keys(given).length) {
        return fail("No fields provided. Pass at least one of: soul, description, skills, tool_groups, model (omit unchanged fields).");
      }
      if (given.soul !== undefined && !given.soul.trim()) {
        return fail("soul content is empty; refusing to update agent with an empty SOUL.md. Omit soul to keep it.");
      }
      const raw = contextAgentName(runtime.context);
      if (!raw) return fail("update_agent is only available inside a custom agent's chat; in the bootstrap flow use setup_agent.");
      const { userId } = runtime.context.identity;
      const store = storeOf(options);
      let name: string;
      let existing: CustomAgentConfig;
      try {
        name = normalizeAgentName(raw);
        if (given.model !== undefined && options.modelNames && !options.modelNames().includes(given.model)) {
          return fail(`Unknown model '${given.model}'. Pass a model name from config.yaml's models section.`);
        }
        if (await store.isLegacyOnly(userId, name)) {
          return fail(`Agent '${name}' only exists in the legacy shared layout; move it under users/${userId}/agents before updating.`);
        }
        existing = await store.get(userId, name);
      } catch (err) {
        return fail(errorMessage(err));
      }
      const changed: string[] = [];
      const doc: CustomAgentDocument = { ...unmanagedAgentFields(existing), name, description: existing.description ?? "" };
      for (const key of ["description", "model", "tool_groups", "skills"] as const) {
        const next = given[key] ?? existing[key];
        if (next !== undefined && next !== null) (doc as Record<string, unknown>)[key] = next;
        if (given[key] !== undefined && JSON.stringify(given[key]) !== JSON.stringify(existing[key] ?? null)) changed.push(key);
      }
      // fields owned by the UI/API (sampling, thinking) survive a self-update
      for (const key of ["model_settings", "thinking_enabled", "reasoning_effort"] as const) {
        if (existing[key] !== undefined && existing[key] !== null) (doc as Record<string, unknown>)[key] = existing[key];
      }
      if (given.soul !== undefined) changed.push("soul");
      if (!changed.length) return `No changes applied to agent '${name}'. The provided values matched the existing config.`;
      try {
        const configChanged = changed.some((k) => k !== "soul");
        await store.update(userId, name, configChanged ? doc : null, given.soul ?? null);
      } catch (err) {
        return fail(`Failed to update agent '${name}': ${errorMessage(err)}`);
      }
      return `Agent '${name}' updated successfully. Changed: ${changed.join(", ")}. The new configuration takes effect on the next user turn.`;
    },
  });
}
