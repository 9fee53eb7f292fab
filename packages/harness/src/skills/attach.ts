import path from "node:path";
import type { AppConfig, ConfigManager } from "../config";
import { contentReviewFromConfig } from "./content-review";
import type { SkillModelFactory } from "./content-review";
import { resolveSkillsPath, SkillRegistry } from "./registry";
import { PostgresUserSkillStates } from "./skill-state-pg";

/** What {@link attachSkills} needs from the runtime (structural, so the runtime module is not imported here). */
export interface SkillsHost {
  readonly dataDir: string;
  readonly configManager: ConfigManager | undefined;
  readonly extensions: { skills?: SkillRegistry };
  readonly recorder: { addHook(hook: { name: string; runStarted?(run: { userId: string }): Promise<void> | void }): void };
  config(): AppConfig | undefined;
  invalidateAgents(): void;
  /** The runtime's PostgreSQL pool (`database.backend: postgres`): users' skill states live there. */
  readonly pgPool?: import("pg").Pool;
}

/** How long a user's enabled-only skills view is trusted before a run re-checks it against the files. */
const VIEW_RECHECK_MS = 2000;

/** The files behind the config in use; undefined when the config was given as an object (no file of ours). */
function loadedPaths(host: Pick<SkillsHost, "configManager" | "config">): { path: string; extensionsPath: string | null } | undefined {
  try {
    const loaded = host.configManager?.getLoaded();
    return loaded && loaded.config === host.config() ? loaded : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link createRuntimeSkills} and {@link attachSkills}. */
export interface AttachSkillsOptions {
  cwd?: string;
  modelFactory?: SkillModelFactory;
  log?: (message: string) => void;
}

/** A runtime's skill registry and the run hook that keeps each user's sandbox view current. */
export interface RuntimeSkills {
  registry: SkillRegistry;
  /** `runStarted`: a user's first run waits for the enabled-only view, later ones re-check it in the background. */
  viewHook: { name: string; runStarted(run: { userId: string }): Promise<void> };
}

/**
 * Create the skill registry of a runtime and its run hook: the user's
 * enabled-only sandbox view refreshed when a run starts, and cached agents
 * dropped when a skill changes so the next run's prompt lists the new state.
 * `skills.path` and the extensions file come from the config; the enabled
 * states are re-read on use. The skills capability (capabilities/skills.ts)
 * stores the registry as `runtime.extensions.skills` and adds the hook.
 * The registry exists also when the runtime has no config: then `./skills`
 * under the working directory, else the bundled skills.
 */
export function createRuntimeSkills(host: Omit<SkillsHost, "extensions" | "recorder">, options: AttachSkillsOptions = {}): RuntimeSkills {
  const config = host.config();
  const loaded = loadedPaths(host);
  const cwd = options.cwd ?? process.cwd();
  const projectRoot = process.env.DEER_FLOW_PROJECT_ROOT ?? (loaded && path.isAbsolute(loaded.path) ? path.dirname(loaded.path) : cwd);
  const base = config
    ? SkillRegistry.fromConfig(config, { dataDir: host.dataDir, projectRoot })
    : new SkillRegistry({ skillsPath: resolveSkillsPath(undefined, projectRoot), dataDir: host.dataDir, projectRoot });
  const scan = config?.skill_scan as { enabled?: unknown } | undefined;
  const registry = new SkillRegistry({
    skillsPath: base.skillsPath,
    containerPath: base.containerPath,
    dataDir: host.dataDir,
    projectRoot,
    extensionsPath: () => loadedPaths(host)?.extensionsPath ?? null,
    extensions: () => host.config()?.extensions,
    scanEnabled: scan?.enabled !== false,
    // On PostgreSQL every process shares the states, each toggle one upsert (the files would race across processes).
    userStates: host.pgPool ? new PostgresUserSkillStates(host.pgPool) : undefined,
    // Read on each install, so setting `skill_evolution.moderation_model_name` applies after a config reload.
    contentReview: contentReviewFromConfig(() => host.config(), { modelFactory: options.modelFactory, log: options.log }),
    onChange: () => {
      checked.clear();
      host.invalidateAgents();
    },
  });
  // Every run starts with this hook, so it must be cheap. A user's first run waits for the view to exist; after
  // that the view is re-checked against the files at most once per VIEW_RECHECK_MS, in the background: a run never
  // waits for a re-check, it sees the view as of the last check (changes made through the registry refresh it at
  // once; an edit of the files by hand shows within that time). Concurrent runs of one user share one check.
  const checked = new Map<string, { at: number; done: Promise<unknown>; ready: boolean }>();
  const recheck = (userId: string, now: number, ready: boolean): { at: number; done: Promise<unknown>; ready: boolean } => {
    const entry = { at: now, done: registry.ensureView(userId), ready };
    checked.delete(userId);
    checked.set(userId, entry);
    entry.done.then(
      () => (entry.ready = true),
      (err: unknown) => {
        // A failed check is retried by the next run (which waits for it unless an earlier view exists).
        if (checked.get(userId) === entry) checked.set(userId, { ...entry, at: 0 });
        if (ready) options.log?.(`[deerflow] skills view of ${userId} could not be refreshed: ${(err as Error)?.message ?? String(err)}`);
      },
    );
    while (checked.size > 1000) checked.delete(checked.keys().next().value as string);
    return entry;
  };
  const viewHook = {
    name: "skills",
    async runStarted({ userId }: { userId: string }) {
      const now = Date.now();
      let entry = checked.get(userId);
      if (!entry || now - entry.at >= VIEW_RECHECK_MS) entry = recheck(userId, now, entry?.ready ?? false);
      if (!entry.ready) await entry.done;
    },
  };
  return { registry, viewHook };
}

/**
 * {@link createRuntimeSkills} for a host that is not a `DeerFlowRuntime`
 * (embedders, tests): the registry is stored as `host.extensions.skills` and
 * the view hook added to `host.recorder`.
 */
export function attachSkills(host: SkillsHost, options: AttachSkillsOptions = {}): SkillRegistry {
  const { registry, viewHook } = createRuntimeSkills(host, options);
  host.extensions.skills = registry;
  host.recorder.addHook(viewHook);
  return registry;
}
