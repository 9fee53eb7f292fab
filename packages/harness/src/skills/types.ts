/**
 * Skill model. A skill is a directory holding a `SKILL.md` (YAML frontmatter
 * plus Markdown instructions) and optional scripts, references and templates.
 * The directory is the package boundary: a `SKILL.md` nested below another
 * one is package data, never a skill of its own.
 */

/** The file that makes a directory a skill. */
export const SKILL_MD_FILE = "SKILL.md";

/** Default container root under which skills are visible in a sandbox. */
export const DEFAULT_SKILLS_CONTAINER_PATH = "/mnt/skills";

/**
 * Where a skill comes from: `public` (bundled, read-only), `custom` (a user's
 * own, editable), `legacy` (global custom skills from before per-user
 * storage, read-only).
 */
export type SkillCategory = "public" | "custom" | "legacy";

/** A request-scoped secret a skill declares (`required-secrets`). */
export interface SecretRequirement {
  /** Name of the key in the request's `context.secrets` and of the env variable bound for the skill. */
  name: string;
  optional: boolean;
}

/** A parsed skill (metadata only; the body is read on demand). */
export interface Skill {
  name: string;
  description: string;
  license: string | null;
  category: SkillCategory;
  /** Host directory of the package. */
  skillDir: string;
  /** Host path of its SKILL.md. */
  skillFile: string;
  /** Path of the package directory relative to its category root (posix). */
  relativePath: string;
  /** `allowed-tools`: undefined when absent, `[]` for an explicit no-tool skill. */
  allowedTools?: readonly string[];
  requiredSecrets: readonly SecretRequirement[];
  /** `secrets-autonomous` (default true). */
  secretsAutonomous: boolean;
  /** Effective enabled state (extensions config for public, per-user state otherwise). */
  enabled: boolean;
}

/** Container path of a skill's directory, e.g. `/mnt/skills/public/deep-research`. */
export function skillContainerDir(skill: Pick<Skill, "category" | "relativePath">, containerRoot = DEFAULT_SKILLS_CONTAINER_PATH): string {
  const root = containerRoot.replace(/\/+$/, "");
  const rel = skill.relativePath === "." ? "" : skill.relativePath;
  return rel ? `${root}/${skill.category}/${rel}` : `${root}/${skill.category}`;
}

/** Container path of a skill's SKILL.md. */
export function skillContainerFile(skill: Pick<Skill, "category" | "relativePath">, containerRoot = DEFAULT_SKILLS_CONTAINER_PATH): string {
  return `${skillContainerDir(skill, containerRoot)}/${SKILL_MD_FILE}`;
}
