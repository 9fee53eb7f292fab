import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { yamlLib } from "../config/yaml-lib";
import { parseYamlBounded } from "../parsing";
import { ValidationError } from "../errors";
import { writeFilesAtomicSync } from "../fs";

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
  /** Fields this API does not manage (e.g. a hand-written `github:` block) are kept on rewrite. */
  [extra: string]: unknown;
}

/** What `config.yaml` may be written with (the soul lives in `SOUL.md`). */
export type CustomAgentDocument = Omit<CustomAgentConfig, "soul">;

/** The only characters a custom agent name may use (it becomes a directory name). */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9-]+$/;

/** The file holding an agent's personality. */
export const SOUL_FILENAME = "SOUL.md";

/** Result of {@link deleteCustomAgent}. */
export type AgentDeleteOutcome = "deleted" | "missing" | "legacy" | "not-custom-agent";

/**
 * Check a custom agent name and return it lower-cased (the storage form).
 * Throws `ValidationError` with code `agent_name_invalid`.
 */
export function normalizeAgentName(name: unknown): string {
  if (typeof name !== "string" || !AGENT_NAME_PATTERN.test(name)) {
    throw new ValidationError(
      `Invalid agent name '${String(name)}'. Must match ^[A-Za-z0-9-]+$ (letters, digits, and hyphens only).`,
      { code: "agent_name_invalid" },
    );
  }
  return name.toLowerCase();
}

/** `{base}/users/{uid}/agents`. */
export function userAgentsDir(baseDir: string, userId: string): string {
  return join(baseDir, "users", userId, "agents");
}

/** `{base}/users/{uid}/agents/{name}` (the only place writes go). */
export function userAgentDir(baseDir: string, userId: string, name: string): string {
  return join(userAgentsDir(baseDir, userId), normalizeAgentName(name));
}

function legacyAgentDir(baseDir: string, name: string): string {
  return join(baseDir, "agents", normalizeAgentName(name));
}

function readConfig(dir: string): Record<string, unknown> {
  const cfgPath = join(dir, "config.yaml");
  if (!existsSync(cfgPath)) return {};
  try {
    // The API writes this file, so it is bounded like any request body before it is composed.
    const doc = parseYamlBounded(readFileSync(cfgPath, "utf8"), cfgPath);
    if (doc === null || doc === undefined) return {};
    if (typeof doc !== "object" || Array.isArray(doc)) throw new Error("not a mapping");
    return doc as Record<string, unknown>;
  } catch (err) {
    throw new ValidationError(`${cfgPath}: invalid YAML (${(err as Error).message})`, { code: "agent_config_invalid" });
  }
}

function readSoul(dir: string): string | null {
  const p = join(dir, SOUL_FILENAME);
  if (!existsSync(p)) return null;
  const text = readFileSync(p, "utf8").trim();
  return text || null;
}

/**
 * Load a custom agent by name (lower-cased), looking in the user's directory
 * first and then the legacy shared `{base}/agents/{name}`.
 */
export function loadCustomAgent(baseDir: string, userId: string, name: string): CustomAgentConfig {
  const lower = normalizeAgentName(name);
  const dirs = [userAgentDir(baseDir, userId, lower), legacyAgentDir(baseDir, lower)];
  // A per-user directory holding only memory data (no config.yaml) must not shadow a legacy agent.
  const dir =
    dirs.find((d) => existsSync(join(d, "config.yaml"))) ?? dirs.find((d) => existsSync(join(d, SOUL_FILENAME)));
  if (!dir) throw new ValidationError(`Agent '${lower}' not found`, { code: "agent_not_found" });
  const cfg = readConfig(dir);
  const fromFile = readSoul(dir);
  return {
    ...cfg,
    name: lower,
    description: typeof cfg.description === "string" ? cfg.description : "",
    soul: fromFile ?? (typeof cfg.soul === "string" ? cfg.soul : null),
  };
}

/** True when the name is taken for this user (per-user or legacy directory exists). */
export function customAgentExists(baseDir: string, userId: string, name: string): boolean {
  return existsSync(userAgentDir(baseDir, userId, name)) || existsSync(legacyAgentDir(baseDir, name));
}

/** True when the agent exists only in the legacy shared layout (writes there are refused). */
export function isLegacyOnlyAgent(baseDir: string, userId: string, name: string): boolean {
  return !existsSync(join(userAgentDir(baseDir, userId, name), "config.yaml")) && existsSync(join(legacyAgentDir(baseDir, name), "config.yaml"));
}

/**
 * Every custom agent of a user, sorted by name: the per-user directory plus
 * legacy shared agents it does not shadow. An unreadable agent is skipped
 * (reported through `warn`) so it cannot hide the others.
 */
export function listCustomAgents(baseDir: string, userId: string, warn?: (m: string) => void): CustomAgentConfig[] {
  const seen = new Set<string>();
  const out: CustomAgentConfig[] = [];
  for (const root of [userAgentsDir(baseDir, userId), join(baseDir, "agents")]) {
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root).sort()) {
      if (seen.has(entry) || !AGENT_NAME_PATTERN.test(entry)) continue;
      const dir = join(root, entry);
      if (!statSync(dir).isDirectory() || !existsSync(join(dir, "config.yaml"))) continue;
      try {
        out.push(loadCustomAgent(baseDir, userId, entry));
        seen.add(entry);
      } catch (err) {
        warn?.(`Skipping agent '${entry}': ${(err as Error).message}`);
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Write `config.yaml` and/or `SOUL.md` with the shared atomic write: both
 * are staged (written and fsynced) before either is renamed over its target,
 * so a reader never sees half a file. The two renames are sequential, not
 * one transaction.
 */
function writeAgentFiles(dir: string, config: CustomAgentDocument | null, soul: string | null): void {
  const files: Array<{ file: string; data: string }> = [];
  if (config) {
    const { soul: _dropped, ...doc } = config as CustomAgentConfig;
    files.push({ file: join(dir, "config.yaml"), data: yamlLib().stringify(doc) });
  }
  if (soul !== null) files.push({ file: join(dir, SOUL_FILENAME), data: soul });
  writeFilesAtomicSync(files);
}

/**
 * Create a new agent in the user's directory. Throws `ValidationError`
 * `agent_exists` when the name is taken (also by a legacy shared agent).
 */
export function createCustomAgent(baseDir: string, userId: string, config: CustomAgentDocument, soul: string): CustomAgentConfig {
  const name = normalizeAgentName(config.name);
  const dir = userAgentDir(baseDir, userId, name);
  if (customAgentExists(baseDir, userId, name)) throw new ValidationError(`Agent '${name}' already exists`, { code: "agent_exists" });
  mkdirSync(userAgentsDir(baseDir, userId), { recursive: true });
  try {
    // non-recursive mkdir fails when a concurrent create won the race
    mkdirSync(dir);
  } catch {
    throw new ValidationError(`Agent '${name}' already exists`, { code: "agent_exists" });
  }
  try {
    writeAgentFiles(dir, { ...config, name }, soul);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return loadCustomAgent(baseDir, userId, name);
}

/**
 * Upsert an agent in the user's directory: `config` (when given) replaces
 * `config.yaml`, `soul` (when given) replaces `SOUL.md`; `null` leaves the file.
 */
export function updateCustomAgent(
  baseDir: string,
  userId: string,
  name: string,
  config: CustomAgentDocument | null,
  soul: string | null,
): CustomAgentConfig {
  const lower = normalizeAgentName(name);
  const dir = userAgentDir(baseDir, userId, lower);
  const existed = existsSync(dir);
  mkdirSync(dir, { recursive: true });
  try {
    writeAgentFiles(dir, config ? { ...config, name: lower } : null, soul);
  } catch (err) {
    if (!existed) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return loadCustomAgent(baseDir, userId, lower);
}

/**
 * Delete the user's agent directory (config, soul and its memory). A legacy
 * shared agent is never deleted; a directory without `config.yaml` holds only
 * memory data and is kept.
 */
export function deleteCustomAgent(baseDir: string, userId: string, name: string): AgentDeleteOutcome {
  const dir = userAgentDir(baseDir, userId, name);
  if (!existsSync(dir)) return existsSync(legacyAgentDir(baseDir, name)) ? "legacy" : "missing";
  if (!existsSync(join(dir, "config.yaml"))) return "not-custom-agent";
  rmSync(dir, { recursive: true, force: true });
  return "deleted";
}

/** Keys `update_agent` and `PUT /api/agents/{name}` manage; anything else in `config.yaml` is carried forward. */
export const MANAGED_AGENT_FIELDS = new Set([
  "name",
  "description",
  "model",
  "tool_groups",
  "skills",
  "model_settings",
  "thinking_enabled",
  "reasoning_effort",
  "soul",
]);

/** The hand-written fields of an agent that no update surface manages. */
export function unmanagedAgentFields(agent: CustomAgentConfig): Record<string, unknown> {
  return Object.fromEntries(Object.entries(agent).filter(([k]) => !MANAGED_AGENT_FIELDS.has(k)));
}

/**
 * A cheap fingerprint of an agent's files (sizes and mtimes of `config.yaml`
 * and `SOUL.md`, per-user and legacy): agent caches key on it, so an edit by
 * `update_agent`, the HTTP API or by hand shows on the next run.
 */
export function customAgentSignature(baseDir: string, userId: string, name: string): string {
  let lower: string;
  try {
    lower = normalizeAgentName(name);
  } catch {
    return "";
  }
  const parts: string[] = [];
  for (const dir of [userAgentDir(baseDir, userId, lower), legacyAgentDir(baseDir, lower)]) {
    for (const f of ["config.yaml", SOUL_FILENAME]) {
      try {
        const st = statSync(join(dir, f));
        parts.push(`${st.size}:${st.mtimeMs}`);
      } catch {
        parts.push("-");
      }
    }
  }
  return parts.join("|");
}
