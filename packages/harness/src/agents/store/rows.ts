import { randomUUID } from "node:crypto";
import { ValidationError } from "../../errors";
import { normalizeAgentName } from "../custom-agent";
import type { CustomAgentConfig, CustomAgentDocument } from "../custom-agent";

/** One agent as the database stores it (SQLite and PostgreSQL alike). */
export interface AgentRow {
  name: string;
  /** The config document as JSON text, without `name` (its own column) and without the soul. */
  config: string;
  soul: string;
  /** A fresh token per write: the agent's change signature (a counter would repeat after delete + create). */
  rev: string;
}

/** Upper bound of one stored agent (document + soul), the size the file backend's bounded YAML reader accepts. */
const MAX_AGENT_BYTES = 1024 * 1024;

/** The JSON text stored for a document: `name` and `soul` dropped, keys as given. */
export function documentText(config: CustomAgentDocument): string {
  const { name: _name, soul: _soul, ...rest } = config as CustomAgentConfig;
  const text = JSON.stringify(rest);
  if (Buffer.byteLength(text) > MAX_AGENT_BYTES) {
    throw new ValidationError(`Agent '${config.name}' config is larger than ${MAX_AGENT_BYTES} bytes`, { code: "agent_config_invalid" });
  }
  return text;
}

/** A new change token. */
export const newRev = (): string => randomUUID();

/**
 * The agent a row holds, in the shape the file backend reads: `name` from
 * the key, `description` always a string, the soul trimmed (empty → null).
 */
export function agentFromRow(row: AgentRow): CustomAgentConfig {
  let cfg: Record<string, unknown>;
  try {
    const parsed = JSON.parse(row.config) as unknown;
    cfg = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    throw new ValidationError(`Agent '${row.name}': stored config is not JSON (${(err as Error).message})`, { code: "agent_config_invalid" });
  }
  const soul = row.soul.trim();
  return {
    ...cfg,
    name: row.name,
    description: typeof cfg.description === "string" ? cfg.description : "",
    soul: soul || (typeof cfg.soul === "string" ? cfg.soul : null),
  };
}

/** `agent_not_found` for a missing row (the code the routes answer 404 on). */
export function agentNotFound(name: string): ValidationError {
  return new ValidationError(`Agent '${name}' not found`, { code: "agent_not_found" });
}

/** `agent_exists` for a taken name (the routes answer 409). */
export function agentExists(name: string): ValidationError {
  return new ValidationError(`Agent '${name}' already exists`, { code: "agent_exists" });
}

/** Check and lower-case a name the way the file backend does (`agent_name_invalid`). */
export const rowName = (name: unknown): string => normalizeAgentName(name);
