import { parseYamlBounded, ParseLimitError } from "../parsing";
import type { YamlLimits } from "../parsing";
import { SkillValidationError } from "./errors";
import type { SecretRequirement } from "./types";

/** Frontmatter keys a SKILL.md may carry (DeerFlow's set; the Agent Skills format is a subset). */
export const ALLOWED_FRONTMATTER_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "license",
  "allowed-tools",
  "required-secrets",
  "secrets-autonomous",
  "metadata",
  "compatibility",
  "version",
  "author",
]);

/** Max length of a skill name. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Max length of a skill description. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;

/**
 * Limits of a SKILL.md frontmatter, checked before the YAML is composed. Real
 * frontmatters are well under 1 KiB with a dozen keys; composing a mapping
 * costs time quadratic in its width, so an archive with a 100,000-key
 * frontmatter would hold the event loop for minutes without them.
 */
export const FRONTMATTER_LIMITS: YamlLimits = { maxBytes: 64 * 1024, maxNodes: 1000, maxAliasCount: 100 };

const OPEN_FENCE_RE = /^---[ \t]*\r?\n/;
const CLOSE_FENCE_RE = /\r?\n---[ \t]*(?:\r?\n|$)/g;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A SKILL.md split into its frontmatter and body. */
export interface SkillMarkdown {
  metadata: Record<string, unknown>;
  body: string;
}

/**
 * Split a SKILL.md into frontmatter and body.
 * The frontmatter is measured against `limits` (bytes, then a linear node
 * count) before it is parsed, so an oversized one is refused in milliseconds.
 * @throws SkillValidationError naming `file` when there is no frontmatter, it is over a limit (`details.limit`), the YAML is invalid or not a mapping.
 */
export function splitSkillMarkdown(content: string, file = "SKILL.md", limits: YamlLimits = FRONTMATTER_LIMITS): SkillMarkdown {
  const text = content.startsWith("\uFEFF") ? content.slice(1) : content;
  const open = OPEN_FENCE_RE.exec(text);
  // One forward search for the closing fence: linear in the file, whatever its size.
  const close = new RegExp(CLOSE_FENCE_RE.source, "g");
  close.lastIndex = open ? open[0].length : 0;
  const end = open ? close.exec(text) : null;
  if (!open || !end) throw new SkillValidationError(`${file}: no YAML frontmatter found (the file must start with a '---' block)`, { file });
  const yamlText = text.slice(open[0].length, end.index);
  let metadata: unknown;
  try {
    metadata = parseYamlBounded(yamlText, file, limits, "frontmatter");
  } catch (err) {
    if (err instanceof ParseLimitError) {
      throw new SkillValidationError(err.message, { file, cause: err, details: { limit: err.details.limit, max: err.details.max, actual: err.details.actual } });
    }
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    const where = line ? ` (line ${line + 1})` : "";
    throw new SkillValidationError(`${file}: invalid YAML in frontmatter${where}: ${(err as Error).message.split("\n")[0]}`, { file, cause: err });
  }
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) {
    throw new SkillValidationError(`${file}: frontmatter must be a YAML mapping`, { file });
  }
  return { metadata: metadata as Record<string, unknown>, body: text.slice(end.index + end[0].length) };
}

/** Why a skill name is invalid, or undefined when it is a valid hyphen-case name. */
export function skillNameProblem(name: string): string | undefined {
  if (!name) return "Name cannot be empty";
  if (!/^[a-z0-9-]+$/.test(name)) return `Name '${name}' should be hyphen-case (lowercase letters, digits, and hyphens only)`;
  if (name.startsWith("-") || name.endsWith("-") || name.includes("--")) {
    return `Name '${name}' cannot start/end with hyphen or contain consecutive hyphens`;
  }
  if (name.length > MAX_SKILL_NAME_LENGTH) return `Name is too long (${name.length} characters). Maximum is ${MAX_SKILL_NAME_LENGTH} characters.`;
  return undefined;
}

/** The validated fields of a frontmatter. */
export interface SkillFrontmatter {
  name: string;
  description: string;
  license: string | null;
  allowedTools?: string[];
  requiredSecrets: SecretRequirement[];
  secretsAutonomous: boolean;
  /** Keys outside {@link ALLOWED_FRONTMATTER_KEYS} (an error when `strict`). */
  unexpectedKeys: string[];
}

function fail(file: string, key: string, message: string): never {
  throw new SkillValidationError(`${file}: ${message}`, { file, key });
}

/**
 * Tool names of the Agent Skills ecosystem (Claude Code) mapped to this
 * harness's tools, so a skill written for it keeps working under
 * SkillToolPolicy instead of losing every tool.
 */
const TOOL_ALIASES: Readonly<Record<string, string>> = {
  read: "read_file",
  write: "write_file",
  edit: "str_replace",
  multiedit: "str_replace",
  bash: "bash",
  glob: "glob",
  grep: "grep",
  ls: "ls",
  webfetch: "web_fetch",
  websearch: "web_search",
  task: "task",
  todowrite: "write_todos",
};

/** Normalise one allowed-tools entry: `Bash(git:*)` → `bash`, `Read` → `read_file`; our own names pass unchanged. */
export function normalizeAllowedTool(raw: string): string {
  const base = raw.trim().replace(/\(.*\)$/, "");
  return TOOL_ALIASES[base.toLowerCase()] && /^[A-Z]/.test(base) ? (TOOL_ALIASES[base.toLowerCase()] as string) : base;
}

/** Split the Agent Skills string form (`"Read Grep Bash(git:*)"`, commas allowed), keeping parentheses together. */
function splitToolString(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let depth = 0;
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (cur) out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

function parseAllowedTools(raw: unknown, file: string): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  // DeerFlow writes a YAML list; the Agent Skills spec a space-separated string. Both are accepted.
  const items: unknown[] = typeof raw === "string" ? splitToolString(raw) : Array.isArray(raw) ? raw : fail(file, "allowed-tools", "allowed-tools must be a list of strings (or a space-separated string)");
  const names = items.map((item) => {
    if (typeof item !== "string") fail(file, "allowed-tools", "allowed-tools must contain only strings");
    const name = item.trim();
    if (!name) fail(file, "allowed-tools", "allowed-tools cannot contain empty tool names");
    return normalizeAllowedTool(name);
  });
  return [...new Set(names)];
}

function parseRequiredSecrets(raw: unknown, file: string): SecretRequirement[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) fail(file, "required-secrets", "required-secrets must be a list");
  const out: SecretRequirement[] = [];
  for (const item of raw) {
    let name: string;
    let optional = false;
    if (typeof item === "string") name = item.trim();
    else if (item && typeof item === "object" && !Array.isArray(item)) {
      const o = item as Record<string, unknown>;
      name = typeof o.name === "string" ? o.name.trim() : "";
      optional = o.optional === true;
    } else fail(file, "required-secrets", `required-secrets entries must be names or {name, optional} mappings, got ${JSON.stringify(item)}`);
    if (!ENV_NAME_RE.test(name)) fail(file, "required-secrets", `required-secrets entry '${name}' is not a valid environment variable name`);
    if (!out.some((s) => s.name === name)) out.push({ name, optional });
  }
  return out;
}

/**
 * Validate a parsed frontmatter with DeerFlow's rules: `name` hyphen-case
 * ≤ 64, `description` required, ≤ 1024 characters and free of `<`/`>`,
 * `allowed-tools` a list of names, `required-secrets` a list of env names or
 * `{name, optional}`, `secrets-autonomous` a boolean. With `strict` (install
 * time) unknown keys are an error too; otherwise they are returned so the
 * loader can warn.
 * @throws SkillValidationError naming the file and the offending key.
 */
export function validateSkillFrontmatter(metadata: Record<string, unknown>, file: string, options: { strict?: boolean } = {}): SkillFrontmatter {
  const unexpectedKeys = Object.keys(metadata).filter((k) => !ALLOWED_FRONTMATTER_KEYS.has(k)).sort();
  if (options.strict && unexpectedKeys.length) {
    throw new SkillValidationError(`${file}: Unexpected key(s) in SKILL.md frontmatter: ${unexpectedKeys.join(", ")}`, { file, key: unexpectedKeys[0] });
  }
  if (!("name" in metadata)) fail(file, "name", "Missing 'name' in frontmatter");
  if (!("description" in metadata)) fail(file, "description", "Missing 'description' in frontmatter");
  if (typeof metadata.name !== "string") fail(file, "name", `Name must be a string, got ${typeof metadata.name}`);
  const name = metadata.name.trim();
  const nameProblem = skillNameProblem(name);
  if (nameProblem) fail(file, "name", nameProblem);
  if (typeof metadata.description !== "string") fail(file, "description", `Description must be a string, got ${typeof metadata.description}`);
  const description = metadata.description.trim();
  if (!description) fail(file, "description", "Description cannot be empty");
  if (/[<>]/.test(description)) fail(file, "description", "Description cannot contain angle brackets (< or >)");
  if (description.length > MAX_SKILL_DESCRIPTION_LENGTH) {
    fail(file, "description", `Description is too long (${description.length} characters). Maximum is ${MAX_SKILL_DESCRIPTION_LENGTH} characters.`);
  }
  const autonomous = metadata["secrets-autonomous"];
  if (autonomous !== undefined && autonomous !== null && typeof autonomous !== "boolean") {
    fail(file, "secrets-autonomous", "secrets-autonomous must be a boolean");
  }
  const license = metadata.license == null ? null : String(metadata.license).trim() || null;
  return {
    name,
    description,
    license,
    allowedTools: parseAllowedTools(metadata["allowed-tools"], file),
    requiredSecrets: parseRequiredSecrets(metadata["required-secrets"], file),
    secretsAutonomous: autonomous !== false,
    unexpectedKeys,
  };
}
