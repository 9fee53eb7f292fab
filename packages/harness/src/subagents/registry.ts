import { z } from "zod";
import { ConfigError } from "../errors";
import { BUILTIN_SUBAGENTS, SUBAGENT_DISALLOWED_TOOLS } from "./builtin-types";
import type { SubagentConfig } from "./types";

/** Message of a refused `bash` sub-agent (commands would run on the host without isolation). */
export const BASH_SUBAGENT_DISABLED_MESSAGE =
  "Bash subagent is disabled for LocalSandboxProvider because host bash execution is not a secure sandbox boundary. " +
  "Use the bwrap sandbox provider for isolated commands, or set sandbox.allow_host_bash: true only in a fully trusted local environment.";

const positiveInt = z.number().int().positive();
// Seconds may be fractional (tests and tight deployments use sub-second timeouts).
const positiveSeconds = z.number().positive();

/** `subagents.agents.<name>`: per-agent overrides (built-in and custom types). */
export const subagentOverrideSchema = z.looseObject({
  timeout_seconds: positiveSeconds.nullish(),
  max_turns: positiveInt.nullish(),
  model: z.string().min(1).nullish(),
  skills: z.array(z.string()).nullish(),
  token_budget: z.record(z.string(), z.unknown()).nullish(),
});

/** `subagents.custom_agents.<name>`: a custom sub-agent type. */
export const customSubagentSchema = z.looseObject({
  description: z.string().min(1),
  system_prompt: z.string().min(1),
  tools: z.array(z.string()).nullish(),
  disallowed_tools: z.array(z.string()).nullish(),
  skills: z.array(z.string()).nullish(),
  model: z.string().min(1).nullish(),
  max_turns: positiveInt.nullish(),
  timeout_seconds: positiveSeconds.nullish(),
});

/** The `subagents:` config section as the registry reads it. */
export interface SubagentsSection {
  timeout_seconds?: number | null;
  max_turns?: number | null;
  max_total_per_run?: number | null;
  token_budget?: Record<string, unknown> | null;
  agents?: Record<string, unknown> | null;
  custom_agents?: Record<string, unknown> | null;
}

/** Options of {@link SubagentRegistry}. */
export interface SubagentRegistryOptions {
  /** The `subagents:` section (absent = DeerFlow's defaults). */
  config?: SubagentsSection | null;
  /** Whether commands may run (isolated provider, or `allow_host_bash`). Without it the `bash` type is hidden and refused. */
  bashAllowed: boolean;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

function issuesText(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join(".") || "(entry)"}: ${i.message}`).join("; ");
}

/**
 * The sub-agent types of one config: built-ins first, then
 * `subagents.custom_agents`. Resolution follows DeerFlow: the global
 * `timeout_seconds` / `max_turns` apply to built-ins only; per-agent
 * `subagents.agents.<name>` overrides (`timeout_seconds`, `max_turns`,
 * `model`, `skills`, `token_budget`) apply to every type. Invalid entries are
 * a {@link ConfigError} naming the key.
 */
export class SubagentRegistry {
  readonly bashAllowed: boolean;
  private readonly types = new Map<string, SubagentConfig>();

  constructor(options: SubagentRegistryOptions) {
    this.bashAllowed = options.bashAllowed;
    const section = options.config ?? {};
    const overrides = new Map<string, z.output<typeof subagentOverrideSchema>>();
    for (const [name, raw] of Object.entries(section.agents ?? {})) {
      const parsed = subagentOverrideSchema.safeParse(raw ?? {});
      if (!parsed.success) throw new ConfigError(`subagents.agents.${name}: ${issuesText(parsed.error)}`, { details: { key: `subagents.agents.${name}` } });
      overrides.set(name, parsed.data);
    }
    const globalTimeout = section.timeout_seconds ?? undefined;
    const globalTurns = section.max_turns ?? undefined;
    const globalBudget = section.token_budget ?? null;
    for (const base of BUILTIN_SUBAGENTS) {
      this.types.set(base.name, {
        ...base,
        timeoutSeconds: globalTimeout ?? base.timeoutSeconds,
        maxTurns: globalTurns ?? base.maxTurns,
        tokenBudget: globalBudget,
      });
    }
    for (const [name, raw] of Object.entries(section.custom_agents ?? {})) {
      const key = `subagents.custom_agents.${name}`;
      if (!NAME.test(name)) throw new ConfigError(`${key}: invalid name (use letters, digits, '-' and '_')`, { details: { key } });
      if (this.types.has(name)) throw new ConfigError(`${key}: '${name}' is a built-in sub-agent type; pick another name`, { details: { key } });
      const parsed = customSubagentSchema.safeParse(raw ?? {});
      if (!parsed.success) throw new ConfigError(`${key}: ${issuesText(parsed.error)}`, { details: { key } });
      const c = parsed.data;
      this.types.set(name, {
        name,
        description: c.description,
        systemPrompt: c.system_prompt,
        tools: c.tools ?? null,
        disallowedTools: c.disallowed_tools ?? [...SUBAGENT_DISALLOWED_TOOLS],
        skills: c.skills ?? null,
        model: c.model ?? "inherit",
        maxTurns: c.max_turns ?? 50,
        timeoutSeconds: c.timeout_seconds ?? 900,
        tokenBudget: globalBudget,
        requiresBash: false,
        source: "custom",
      });
    }
    for (const [name, o] of overrides) {
      const t = this.types.get(name);
      if (!t) continue; // an override for a type this deployment does not define is inert, as in DeerFlow
      this.types.set(name, {
        ...t,
        timeoutSeconds: o.timeout_seconds ?? t.timeoutSeconds,
        maxTurns: o.max_turns ?? t.maxTurns,
        model: o.model ?? t.model,
        skills: o.skills ?? t.skills,
        tokenBudget: o.token_budget ?? t.tokenBudget,
      });
    }
  }

  /** The type, or `undefined` when unknown (a refused `bash` is still returned; see {@link isRefused}). */
  get(name: string): SubagentConfig | undefined {
    return this.types.get(name);
  }

  /** Why this type cannot run here (`undefined` when it can). */
  refusal(name: string): string | undefined {
    const t = this.types.get(name);
    return t?.requiresBash && !this.bashAllowed ? BASH_SUBAGENT_DISABLED_MESSAGE : undefined;
  }

  /** Types the model may use (a refused `bash` is hidden). */
  available(): SubagentConfig[] {
    return [...this.types.values()].filter((t) => !this.refusal(t.name));
  }

  /** Names of {@link available}. */
  availableNames(): string[] {
    return this.available().map((t) => t.name);
  }
}

/**
 * The model a type runs on: `inherit` is the parent's model name, falling back
 * to the first configured model; anything else is a configured model name.
 */
export function resolveSubagentModelName(config: Pick<SubagentConfig, "model">, parentModelName: string | null | undefined, firstModelName?: string | null): string | undefined {
  if (config.model && config.model !== "inherit") return config.model;
  return parentModelName || firstModelName || undefined;
}

/**
 * A child's effective skill allowlist under its parent's: the child keeps
 * only skills the parent may use (`null` = no restriction at that level).
 */
export function mergeSkillAllowlists(parent: readonly string[] | null | undefined, child: readonly string[] | null | undefined): string[] | null {
  if (parent == null) return child == null ? null : [...child];
  if (child == null) return [...parent];
  return child.filter((s) => parent.includes(s));
}
