import { existsSync } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { AppConfig, ExtensionsConfig } from "../config";
import { packageAssetPath } from "../fs/package-assets";
import { SkillNotFoundError, SkillError } from "./errors";
import { installSkillArchive } from "./installer";
import type { InstallResult } from "./installer";
import { contentReviewFromConfig } from "./content-review";
import type { SkillContentReview, SkillModelFactory } from "./content-review";
import { readSkillBody, scanSkillRoot } from "./loader";
import type { DiscoveredSkill, SkillLoadProblem } from "./loader";
import { ensureSkillsView, skillsViewDir } from "./projection";
import { SkillStateStore } from "./skill-state";
import type { UserSkillStateStore } from "./skill-state";
import { DEFAULT_SKILLS_CONTAINER_PATH, skillContainerDir, skillContainerFile } from "./types";
import type { Skill, SkillCategory } from "./types";

/** Options of {@link SkillRegistry}. */
export interface SkillRegistryOptions {
  /** Host skills root holding `public/` (and legacy `custom/`). */
  skillsPath: string;
  /** Where skills appear in a sandbox (default `/mnt/skills`). */
  containerPath?: string;
  /** Runtime home: custom skills live in `{dataDir}/users/{uid}/skills/custom`. */
  dataDir: string;
  /** The `extensions_config.json` in use (re-read on each call), or a getter. */
  extensionsPath?: string | null | (() => string | null);
  /** The loaded extensions config (used when there is no file). */
  extensions?: ExtensionsConfig | (() => ExtensionsConfig | undefined);
  /** Directory where a missing `extensions_config.json` is created (default: the skills root's parent). */
  projectRoot?: string;
  /** Static scan of installs (`skill_scan.enabled`, default true). */
  scanEnabled?: boolean;
  /** LLM content review of installs, after the static scan (see `contentReviewFromConfig`). */
  contentReview?: SkillContentReview;
  /**
   * How long a listing may be reused (default 1000 ms). The middlewares ask
   * on every model and tool call; this keeps that to one scan per second
   * while edits on disk still show up almost at once. Mutations through the
   * registry drop the cache immediately.
   */
  cacheMs?: number;
  /** Called after a skill was enabled, disabled, installed or deleted (e.g. to rebuild cached agents). */
  onChange?: (userId: string) => void;
  /** Where users' states of their own skills live (default: per-user `_skill_states.json`; PostgreSQL on shared deployments). */
  userStates?: UserSkillStateStore;
}

/** The prompt's skill inputs: enabled skills (metadata only) and names of disabled ones. */
export interface PromptSkillSet {
  skills: Array<{ name: string; description: string; location: string }>;
  disabledSkills: string[];
}

/** One read-only mount of the skills view. */
export interface SkillMountPoint {
  virtual: string;
  host: string;
  readOnly: true;
}

/** The public skills this package ships (`assets/skills` when installed; `skills/` at the repository root in a checkout). */
export const BUNDLED_SKILLS_PATH = packageAssetPath(import.meta.url, "@deerflow-ts/harness", "skills", "skills");

/**
 * Resolve the skills root: `skills.path` (relative to the project root) →
 * `DEER_FLOW_SKILLS_PATH` → `{projectRoot}/skills` when that folder exists →
 * the skills bundled with this package, so a project outside the repository
 * still gets them.
 */
export function resolveSkillsPath(configured: string | null | undefined, projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  if (configured) return path.resolve(projectRoot, configured);
  if (env.DEER_FLOW_SKILLS_PATH) return path.resolve(projectRoot, env.DEER_FLOW_SKILLS_PATH);
  const local = path.join(projectRoot, "skills");
  return existsSync(local) || !existsSync(BUNDLED_SKILLS_PATH) ? local : BUNDLED_SKILLS_PATH;
}

const CATEGORY_ORDER: Record<SkillCategory, number> = { public: 0, legacy: 1, custom: 2 };

/**
 * The skills a user can see, with their enabled state; the prompt listing,
 * the sandbox view, path refusals, enable/disable, install and delete.
 * Nothing is cached: every call re-reads the (small) skill trees and state
 * files, so edits on disk and toggles from other processes apply at once.
 */
export class SkillRegistry {
  readonly skillsPath: string;
  readonly containerPath: string;
  readonly dataDir: string;
  private readonly states: SkillStateStore;
  private readonly scanEnabled: boolean;
  private readonly contentReview?: SkillContentReview;
  private lastProblems: SkillLoadProblem[] = [];
  private readonly cacheMs: number;
  private readonly onChange?: (userId: string) => void;
  private readonly cache = new Map<string, { at: number; skills: Promise<Skill[]> }>();

  constructor(options: SkillRegistryOptions) {
    this.skillsPath = path.resolve(options.skillsPath);
    this.containerPath = (options.containerPath ?? DEFAULT_SKILLS_CONTAINER_PATH).replace(/\/+$/, "") || DEFAULT_SKILLS_CONTAINER_PATH;
    this.dataDir = path.resolve(options.dataDir);
    this.scanEnabled = options.scanEnabled ?? true;
    this.contentReview = options.contentReview;
    this.cacheMs = options.cacheMs ?? 1000;
    this.onChange = options.onChange;
    const ext = options.extensions;
    const extPath = options.extensionsPath;
    this.states = new SkillStateStore({
      dataDir: this.dataDir,
      extensionsPath: typeof extPath === "function" ? extPath : () => extPath ?? null,
      extensions: typeof ext === "function" ? ext : () => ext,
      defaultExtensionsPath: path.join(options.projectRoot ?? path.dirname(this.skillsPath), "extensions_config.json"),
      users: options.userStates,
    });
  }

  /** Build from an app config (`skills.path`, `skills.container_path`, `skill_scan.enabled`, `skill_evolution` moderation). */
  static fromConfig(
    config: Pick<AppConfig, "skills" | "extensions"> & { skill_scan?: unknown },
    options: { dataDir: string; projectRoot?: string; extensionsPath?: string | null; env?: NodeJS.ProcessEnv; modelFactory?: SkillModelFactory; log?: (message: string) => void; userStates?: UserSkillStateStore },
  ): SkillRegistry {
    const projectRoot = options.projectRoot ?? process.env.DEER_FLOW_PROJECT_ROOT ?? process.cwd();
    const scan = config.skill_scan as { enabled?: unknown } | undefined;
    return new SkillRegistry({
      skillsPath: resolveSkillsPath(config.skills?.path, projectRoot, options.env),
      containerPath: config.skills?.container_path,
      dataDir: options.dataDir,
      extensionsPath: options.extensionsPath,
      extensions: config.extensions,
      projectRoot,
      scanEnabled: scan?.enabled !== false,
      contentReview: contentReviewFromConfig(() => ("models" in config ? (config as AppConfig) : undefined), { modelFactory: options.modelFactory, log: options.log }),
      userStates: options.userStates,
    });
  }

  /** Host root of a user's custom skills. */
  customRoot(userId: string): string {
    return path.join(this.dataDir, "users", userId, "skills", "custom");
  }

  /** Problems found by the last {@link list} (malformed SKILL.md files, ignored keys). */
  problems(): readonly SkillLoadProblem[] {
    return this.lastProblems;
  }

  private async discover(userId: string): Promise<DiscoveredSkill[]> {
    const scans = await Promise.all([
      scanSkillRoot(path.join(this.skillsPath, "public"), "public"),
      scanSkillRoot(path.join(this.skillsPath, "custom"), "legacy"),
      scanSkillRoot(this.customRoot(userId), "custom"),
    ]);
    this.lastProblems = scans.flatMap((s) => s.problems);
    return scans.flatMap((s) => s.skills);
  }

  /** Every skill the user can see, with its enabled state, public first then by name. */
  async list(userId: string): Promise<Skill[]> {
    const hit = this.cache.get(userId);
    if (hit && Date.now() - hit.at < this.cacheMs) return [...(await hit.skills)];
    const skills = this.load(userId);
    this.cache.set(userId, { at: Date.now(), skills });
    if (this.cache.size > 256) this.cache.delete(this.cache.keys().next().value as string);
    skills.catch(() => this.cache.delete(userId));
    return [...(await skills)];
  }

  /** Drop cached listings (all users: a public toggle concerns everyone) and tell the owner. */
  private changed(userId: string): void {
    this.cache.clear();
    this.onChange?.(userId);
  }

  private async load(userId: string): Promise<Skill[]> {
    const [found, global, own] = await Promise.all([this.discover(userId), this.states.publicStates(), this.states.userStates(userId)]);
    return found
      .map((s) => {
        const globalOn = global[s.name]?.enabled ?? true;
        const enabled = s.category === "public" ? globalOn : globalOn && (own[s.name]?.enabled ?? true);
        return { ...s, enabled };
      })
      .sort((a, b) => CATEGORY_ORDER[a.category] - CATEGORY_ORDER[b.category] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** One skill by name; a user's custom skill shadows a public one of the same name. */
  async get(name: string, userId: string): Promise<Skill | undefined> {
    const all = (await this.list(userId)).filter((s) => s.name === name);
    return all.sort((a, b) => CATEGORY_ORDER[b.category] - CATEGORY_ORDER[a.category])[0];
  }

  /**
   * The prompt's skills: enabled ones (restricted to `agentSkills` when a
   * custom agent lists some; `null`/undefined = all, `[]` = none) with their
   * container SKILL.md path, and the names of installed-but-disabled ones.
   * The order is deterministic so the prompt prefix stays byte-stable.
   */
  async promptSkills(userId: string, agentSkills?: readonly string[] | null): Promise<PromptSkillSet> {
    const all = await this.list(userId);
    const allowed = (s: Skill) => agentSkills == null || agentSkills.includes(s.name);
    return {
      skills: all.filter((s) => s.enabled && allowed(s)).map((s) => ({ name: s.name, description: s.description, location: skillContainerFile(s, this.containerPath) })),
      disabledSkills: [...new Set(all.filter((s) => !s.enabled && allowed(s)).map((s) => s.name))],
    };
  }

  /** Refresh the user's enabled-only view and return its host directory. */
  async ensureView(userId: string): Promise<string> {
    return ensureSkillsView(this.dataDir, userId, (await this.list(userId)).filter((s) => s.enabled));
  }

  /** The read-only mount of the user's view at the container path (call {@link ensureView} before a sandbox uses it). */
  mountPoints(userId: string): SkillMountPoint[] {
    return [{ virtual: this.containerPath, host: skillsViewDir(this.dataDir, userId), readOnly: true }];
  }

  /** The skill whose package contains a container path, if any. */
  async skillAt(virtualPath: string, userId: string): Promise<Skill | undefined> {
    const p = path.posix.normalize(virtualPath);
    if (p !== this.containerPath && !p.startsWith(`${this.containerPath}/`)) return undefined;
    let best: Skill | undefined;
    for (const s of await this.list(userId)) {
      const dir = skillContainerDir(s, this.containerPath);
      if ((p === dir || p.startsWith(`${dir}/`)) && (!best || dir.length > skillContainerDir(best, this.containerPath).length)) best = s;
    }
    return best;
  }

  /** Name of the disabled skill a container path points into, or undefined. */
  async isDisabledPath(virtualPath: string, userId: string): Promise<string | undefined> {
    const s = await this.skillAt(virtualPath, userId);
    return s && !s.enabled ? s.name : undefined;
  }

  /** A skill's SKILL.md body (frontmatter removed). */
  async readBody(name: string, userId: string): Promise<string> {
    const s = await this.get(name, userId);
    if (!s) throw new SkillNotFoundError(`Skill '${name}' not found`);
    return readSkillBody(s);
  }

  /** A skill's raw SKILL.md. */
  async readContent(name: string, userId: string): Promise<string> {
    const s = await this.get(name, userId);
    if (!s) throw new SkillNotFoundError(`Skill '${name}' not found`);
    return readFile(s.skillFile, "utf8");
  }

  /**
   * Enable or disable a skill: public ones globally in
   * `extensions_config.json`, custom and legacy ones for this user only.
   * The user's view is refreshed so running sandboxes see the change.
   */
  async setEnabled(name: string, enabled: boolean, userId: string): Promise<Skill> {
    const s = await this.get(name, userId);
    if (!s) throw new SkillNotFoundError(`Skill '${name}' not found`);
    if (s.category === "public") await this.states.setPublic(name, enabled);
    else await this.states.setUser(userId, name, enabled);
    this.changed(userId);
    await this.ensureView(userId);
    const updated = await this.get(name, userId);
    if (!updated) throw new SkillNotFoundError(`Skill '${name}' not found after update`);
    return updated;
  }

  /** Install a `.skill` archive (host path) as a custom skill of this user. */
  async install(archivePath: string, userId: string): Promise<InstallResult> {
    const result = await installSkillArchive(archivePath, {
      customRoot: this.customRoot(userId),
      scan: this.scanEnabled,
      contentReview: this.contentReview,
      exists: async (n) => (await this.load(userId)).some((s) => s.name === n),
    });
    this.changed(userId);
    await this.ensureView(userId);
    return result;
  }

  /** Delete a custom skill of this user (public and legacy skills are read-only). */
  async deleteCustom(name: string, userId: string): Promise<void> {
    const s = (await this.list(userId)).find((x) => x.name === name && x.category === "custom");
    if (!s) {
      if (await this.get(name, userId)) throw new SkillError("skill_not_editable", `Skill '${name}' is not a custom skill and cannot be deleted`);
      throw new SkillNotFoundError(`Custom skill '${name}' not found`);
    }
    const root = path.resolve(this.customRoot(userId));
    const dir = path.resolve(s.skillDir);
    if (!dir.startsWith(`${root}${path.sep}`) || !(await stat(dir).catch(() => null))?.isDirectory()) {
      throw new SkillError("skill_not_editable", `Skill '${name}' is outside the custom skills folder`);
    }
    await rm(dir, { recursive: true, force: true });
    await this.states.dropUser(userId, name);
    this.changed(userId);
    await this.ensureView(userId);
  }
}
