import { readdirSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { SkillValidationError } from "./errors";
import { splitSkillMarkdown, validateSkillFrontmatter } from "./frontmatter";
import { SKILL_MD_FILE } from "./types";
import type { Skill, SkillCategory } from "./types";

/** A skill as found on disk, before its enabled state is known. */
export type DiscoveredSkill = Omit<Skill, "enabled">;

/** Something wrong with one SKILL.md: errors keep the skill out, warnings do not. */
export interface SkillLoadProblem {
  file: string;
  key?: string;
  message: string;
  severity: "error" | "warning";
}

/** What scanning a category root yields. */
export interface SkillScan {
  skills: DiscoveredSkill[];
  problems: SkillLoadProblem[];
}

/** Nesting limit of category sub-folders (guards against symlink loops). */
const MAX_DEPTH = 6;

function ignored(name: string): boolean {
  return name.startsWith(".") || name === "__MACOSX" || name === "node_modules";
}

// A synchronous stat that reports a missing path as undefined: one system call, no rejected promise and no error
// object with a stack per missing path (most probed paths of a skills tree do not exist). Async signatures kept.
function statOf(p: string): Stats | undefined {
  try {
    return statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // unreadable (EACCES, ELOOP…): treated as absent, as before
  }
}

function isDir(p: string): boolean {
  return statOf(p)?.isDirectory() ?? false;
}

// Sorted names of a directory's entries worth descending into; unreadable counts as empty.
function childNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !ignored(name)).sort();
  } catch {
    return [];
  }
}

/** A SKILL.md's frontmatter as last parsed, valid while the file's identity, size and times are unchanged. */
interface ParsedFrontmatter {
  stamp: string;
  fm?: ReturnType<typeof validateSkillFrontmatter>;
  error?: unknown;
}

// Runs re-check the skills tree every few seconds. Reading and YAML-parsing every SKILL.md again each time was
// most of that cost (milliseconds of the event loop for a few dozen skills); the stat is taken anyway, so an
// unchanged file reuses its last parse, a malformed one its validation error. A failed read (permissions, too
// many open files) is not kept: the next scan tries again. Bounded, oldest out.
const parsed = new Map<string, ParsedFrontmatter>();
const PARSED_MAX = 4096;

function stampOf(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

async function frontmatterOf(skillFile: string, st: Stats | undefined): Promise<ReturnType<typeof validateSkillFrontmatter>> {
  const stamp = st ? stampOf(st) : "";
  const hit = stamp ? parsed.get(skillFile) : undefined;
  if (hit && hit.stamp === stamp) {
    if (hit.fm) return hit.fm;
    throw hit.error;
  }
  let entry: ParsedFrontmatter;
  try {
    const content = await readFile(skillFile, "utf8");
    entry = { stamp, fm: validateSkillFrontmatter(splitSkillMarkdown(content, skillFile).metadata, skillFile) };
  } catch (error) {
    entry = { stamp, error };
  }
  if (stamp && (entry.fm || entry.error instanceof SkillValidationError)) {
    parsed.delete(skillFile);
    parsed.set(skillFile, entry);
    if (parsed.size > PARSED_MAX) parsed.delete(parsed.keys().next().value as string);
  }
  if (entry.fm) return entry.fm;
  throw entry.error;
}

/**
 * Parse one SKILL.md into a skill of `category`.
 * @throws SkillValidationError naming the file and key when it is malformed.
 */
export async function parseSkillFile(skillFile: string, category: SkillCategory, relativePath: string): Promise<{ skill: DiscoveredSkill; warnings: string[] }> {
  return skillFromFrontmatter(skillFile, category, relativePath, await frontmatterOf(skillFile, statOf(skillFile)));
}

function skillFromFrontmatter(skillFile: string, category: SkillCategory, relativePath: string, fm: ReturnType<typeof validateSkillFrontmatter>): { skill: DiscoveredSkill; warnings: string[] } {
  const warnings = fm.unexpectedKeys.length ? [`${skillFile}: unexpected key(s) in SKILL.md frontmatter: ${fm.unexpectedKeys.join(", ")} (ignored)`] : [];
  return {
    skill: {
      name: fm.name,
      description: fm.description,
      license: fm.license,
      category,
      skillDir: path.dirname(skillFile),
      skillFile,
      relativePath: relativePath || ".",
      // Shared with the kept parse: a skill's lists are readonly.
      allowedTools: fm.allowedTools,
      requiredSecrets: fm.requiredSecrets,
      secretsAutonomous: fm.secretsAutonomous,
    },
    warnings,
  };
}

/**
 * Find the skills under one category root. A directory holding a SKILL.md is
 * a package: its sub-folders are not searched (nested SKILL.md files there,
 * such as evaluation fixtures, are data). Other directories are descended
 * (up to {@link MAX_DEPTH}), so `public/group/my-skill/SKILL.md` is found
 * with relative path `group/my-skill`. Dot folders are skipped. Duplicate
 * names within a root keep the first (in sorted path order) and report the rest.
 */
export async function scanSkillRoot(root: string, category: SkillCategory): Promise<SkillScan> {
  const out: SkillScan = { skills: [], problems: [] };
  if (!isDir(root)) return out;
  const seen = new Map<string, string>();
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    const file = path.join(dir, SKILL_MD_FILE);
    const st = statOf(file);
    if (st?.isFile()) {
      try {
        const { skill, warnings } = skillFromFrontmatter(file, category, rel, await frontmatterOf(file, st));
        for (const w of warnings) out.problems.push({ file, message: w, severity: "warning" });
        const first = seen.get(skill.name);
        if (first) {
          out.problems.push({ file, key: "name", message: `${file}: duplicate skill name '${skill.name}' (already defined by ${first}); ignored`, severity: "error" });
        } else {
          seen.set(skill.name, file);
          out.skills.push(skill);
        }
      } catch (err) {
        if (err instanceof SkillValidationError) {
          out.problems.push({ file, key: err.details.key as string | undefined, message: err.message, severity: "error" });
        } else {
          out.problems.push({ file, message: `${file}: ${(err as Error).message}`, severity: "error" });
        }
      }
      return;
    }
    if (depth >= MAX_DEPTH) return;
    for (const name of childNames(dir)) {
      const child = path.join(dir, name);
      if (isDir(child)) await walk(child, rel ? `${rel}/${name}` : name, depth + 1);
    }
  };
  for (const name of childNames(root)) {
    const child = path.join(root, name);
    if (isDir(child)) await walk(child, name, 1);
  }
  return out;
}

/** Read a skill's SKILL.md body (frontmatter stripped). */
export async function readSkillBody(skill: Pick<Skill, "skillFile">): Promise<string> {
  return splitSkillMarkdown(await readFile(skill.skillFile, "utf8"), skill.skillFile).body.trim();
}
