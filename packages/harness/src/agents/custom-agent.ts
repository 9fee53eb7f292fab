import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { ValidationError } from "../errors";

/** A custom agent's config (`{base}/users/{uid}/agents/{name}/config.yaml` + `SOUL.md`). */
export interface CustomAgentConfig {
  name: string;
  description?: string;
  model?: string | null;
  tool_groups?: string[] | null;
  skills?: string[] | null;
  thinking_enabled?: boolean | null;
  reasoning_effort?: "low" | "medium" | "high" | null;
  model_settings?: { temperature?: number | null; max_tokens?: number | null } | null;
  soul?: string | null;
}

/**
 * Load a custom agent by name (lower-cased), looking in the user's directory
 * first and then the legacy shared `{base}/agents/{name}`.
 */
export function loadCustomAgent(baseDir: string, userId: string, name: string): CustomAgentConfig {
  const lower = name.toLowerCase();
  const dirs = [join(baseDir, "users", userId, "agents", lower), join(baseDir, "agents", lower)];
  const dir = dirs.find((d) => existsSync(join(d, "config.yaml")) || existsSync(join(d, "SOUL.md")));
  if (!dir) throw new ValidationError(`Agent '${name}' not found (looked in ${dirs.join(" and ")})`, { code: "agent_not_found" });
  let cfg: Record<string, unknown> = {};
  const cfgPath = join(dir, "config.yaml");
  if (existsSync(cfgPath)) {
    try {
      cfg = (parse(readFileSync(cfgPath, "utf8")) as Record<string, unknown>) ?? {};
    } catch (err) {
      throw new ValidationError(`${cfgPath}: invalid YAML (${(err as Error).message})`, { code: "agent_config_invalid" });
    }
  }
  const soulPath = join(dir, "SOUL.md");
  return {
    ...(cfg as Partial<CustomAgentConfig>),
    name: lower,
    soul: existsSync(soulPath) ? readFileSync(soulPath, "utf8") : ((cfg.soul as string | undefined) ?? null),
  };
}
