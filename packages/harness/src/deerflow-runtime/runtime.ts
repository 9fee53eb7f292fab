import path from "node:path";
import { createLeadAgentFactory, openAgentStore, runSettings } from "../agents";
import type { AgentStore, LeadAgentExtensions, LeadAgentFactory } from "../agents";
import { asCheckpointer } from "../checkpoints";
import { openStorage } from "../storage";
import type { Checkpointer } from "../checkpoints";
import { ConfigManager } from "../config";
import type { AppConfig, ConfigLogger } from "../config";
import { ConfigError, errorMessage } from "../errors";
import type { PersistenceStores } from "../persistence";
import { createThreadStateView } from "../runtime";
import type { Agent, StateSnapshot, ThreadStateView } from "../runtime";
import { createSandboxProvider, prefetchSandboxProvider, removeTree } from "../sandbox";
import { skillsViewDir } from "../skills";
import { attachCapabilities, LEAD_CAPABILITIES } from "../capabilities";
import type { SandboxProvider } from "../sandbox";
import { threadStateSchema } from "../state";
import type { ThreadState } from "../state";
import { threadPaths } from "../uploads";
import { createWorkspaceChangesHook } from "../workspace";
import { RunRecorder } from "../runs/run-recorder";
import { RunService } from "../runs/run-service";
import { runTakeoverFor } from "../runs/takeover";
import type { RunTakeover } from "../runs/takeover";
import { openRunBackends } from "../runs/open-backends";
import type { RunBackends } from "../runs/backend-types";
import type { AgentFactory, CloseHook, DeerFlowRuntimeOptions, RunSettings, ThreadDeletedHook } from "./types";
import { createChatModel } from "../models";
import type { CreateChatModelOptions, CreatedChatModel } from "../models";

/** Agents kept per config (an agent is rebuilt when the config or the settings change). */
const MAX_CACHED_AGENTS = 64;

/**
 * The settings an agent is built from, in a fixed order. The identity of the run (thread, run) is not part of
 * the agent: one agent serves every thread of a user with these settings. A `Record` over the keys, so a new
 * setting does not compile until it is listed here.
 */
const AGENT_SETTING_KEYS = Object.keys({
  modelName: 1,
  thinkingEnabled: 1,
  reasoningEffort: 1,
  isPlanMode: 1,
  subagentEnabled: 1,
  maxConcurrentSubagents: 1,
  maxTotalSubagents: 1,
  agentName: 1,
  isBootstrap: 1,
  nonInteractive: 1,
  disableClarification: 1,
  userId: 1,
} satisfies Record<Exclude<keyof RunSettings, "threadId" | "runId">, 1>) as (keyof RunSettings)[];

/** The agent cache key of some settings (built per run request: plain string work, no sort or replacer). */
function settingsKey(s: RunSettings): string {
  let key = "";
  // JSON per value keeps `undefined`, `"undefined"` and `1`/`"1"` apart; the separator cannot occur inside JSON text unescaped.
  for (const k of AGENT_SETTING_KEYS) key += `${JSON.stringify(s[k]) ?? "-"}\u0001`;
  return key;
}

/**
 * The one harness-level runtime behind the gateway, the embedded client and
 * the CLI: config (hot-reloaded), the checkpointer every agent shares,
 * thread/run/transcript stores, the sandbox provider, an async agent factory
 * (agents are cached per config and settings), state reads, thread
 * deletion, the run recorder, and `close()`, which releases all of it.
 * Subsystems attach through {@link onThreadDeleted}, {@link onClose} and
 * `recorder.addHook`.
 */
export class DeerFlowRuntime {
  readonly dataDir: string;
  readonly checkpointer: Checkpointer;
  readonly stores: PersistenceStores;
  readonly sandboxProvider: SandboxProvider;
  readonly recorder: RunRecorder;
  /** The run lifecycle (create, stream, cancel, wait, resume) for the gateway and the embedded client. */
  readonly runs: RunService;
  /** On shared backends: resumes runs whose process died (see runs/takeover.ts). */
  private readonly takeover: RunTakeover | undefined;
  /** The lock, leases, stream bridge and signals the run service runs on (from `database:`, `stream_bridge:`, `run_ownership:`). */
  readonly runBackends: RunBackends;
  /** The hot-reloading config manager (undefined when the runtime runs without a config). */
  readonly configManager: ConfigManager | undefined;
  private readonly options: DeerFlowRuntimeOptions;
  private readonly log: (message: string) => void;
  private readonly state: ThreadStateView<ThreadState>;
  private leadFactory: LeadAgentFactory | undefined;
  /**
   * Services subsystems attach while the runtime opens (skills registry, MCP
   * pool, memory service…); the lead agent factory reads them when it builds
   * an agent. Each subsystem owns its own key.
   */
  readonly extensions: LeadAgentExtensions = {};
  /** The PostgreSQL pool of `database:` (postgres only), shared by the process's other stores (memory index, accounts). */
  pgPool?: import("pg").Pool;
  /** Custom agent definitions (`agent_storage:`): files, or rows in the database every process shares. */
  readonly agentStore: AgentStore;
  private readonly agentFactory: AgentFactory | undefined;
  private agents = new WeakMap<object, Map<string, Promise<Agent>>>();
  private readonly noConfigKey = {};
  private readonly threadDeletedHooks: ThreadDeletedHook[] = [];
  private readonly closeHooks: CloseHook[] = [];
  private closed = false;

  private constructor(init: {
    options: DeerFlowRuntimeOptions;
    dataDir: string;
    configManager: ConfigManager | undefined;
    checkpointer: Checkpointer;
    stores: PersistenceStores;
    sandboxProvider: SandboxProvider;
    runBackends: RunBackends;
    agentStore: AgentStore;
    log: (message: string) => void;
  }) {
    this.options = init.options;
    this.dataDir = init.dataDir;
    this.configManager = init.configManager;
    this.checkpointer = init.checkpointer;
    this.stores = init.stores;
    this.sandboxProvider = init.sandboxProvider;
    this.log = init.log;
    this.recorder = new RunRecorder(this.stores, this.log);
    this.runBackends = init.runBackends;
    this.agentStore = init.agentStore;
    this.runs = new RunService({ host: this, backends: init.runBackends, log: this.log });
    // Only shared backends have other processes whose runs could be left without an owner.
    this.takeover = init.runBackends.shared ? runTakeoverFor(this.runs, { log: this.log }) : undefined;
    this.takeover?.start();
    this.state = createThreadStateView<ThreadState>(this.checkpointer, threadStateSchema);
    this.agentFactory = init.options.agentFactory;
    // A deleted thread's container (or remote sandbox) goes with it, not at the idle timeout.
    this.threadDeletedHooks.push((threadId, userId) => this.sandboxProvider.discardThread?.(threadId, { userId }));
  }

  /** The lead agent factory, created on first use (after subsystems attached their extensions). */
  private lead(): LeadAgentFactory | undefined {
    if (!this.leadFactory && !this.agentFactory && this.configManager) {
      this.leadFactory = createLeadAgentFactory({
        config: this.configManager,
        baseDir: this.dataDir,
        agentStore: this.agentStore,
        checkpointer: this.checkpointer,
        sandboxProvider: this.sandboxProvider,
        modelFactory: this.options.modelFactory,
        customMiddleware: this.options.customMiddleware,
        extraTools: this.options.extraTools,
        extensions: this.extensions,
        warn: (m) => this.log(`[deerflow] ${m}`),
      });
    }
    return this.leadFactory;
  }

  /**
   * Open a runtime: load the config (unless one is given), then open the
   * checkpointer, the stores and the sandbox provider it names. Everything
   * opened here is released by {@link close}; what was passed in is not.
   */
  static async open(options: DeerFlowRuntimeOptions = {}): Promise<DeerFlowRuntime> {
    const cwd = options.cwd ?? process.cwd();
    const log = options.log ?? ((m: string) => console.warn(m));
    const dataDir = path.resolve(cwd, options.dataDir ?? ".deer-flow");
    let configManager: ConfigManager | undefined;
    if (options.config instanceof ConfigManager) configManager = options.config;
    else if (options.config) {
      configManager = new ConfigManager({ cwd });
      configManager.set(options.config);
    } else {
      const logger: ConfigLogger = { warn: (m) => log(`[deerflow] config: ${m}`), info: () => undefined };
      const manager = new ConfigManager({ path: options.configPath, cwd, logger });
      try {
        manager.get();
        configManager = manager;
      } catch (err) {
        const missing = err instanceof ConfigError && err.code === "config_not_found";
        if (!(missing && !options.configPath && (options.allowMissingConfig || options.agentFactory))) throw err;
      }
    }
    const config = configManager?.get();
    const owned: CloseHook[] = [];
    // The bwrap check of the sandbox provider (a sandbox started against the data dir) runs while the
    // storage and stores open; the provider below then finds its result cached.
    const sandboxProbe = options.sandboxProvider ? undefined : prefetchSandboxProvider(config?.sandbox, { baseDir: dataDir });
    // PostgreSQL's messages (migrations applied, a connection lost while idle) go to the runtime's log like its others.
    const storage = await openStorage(config, { dataDir, needCheckpoints: !options.checkpointer, needStores: !options.stores, log: (m) => log(`[deerflow] ${m}`) });
    owned.push(() => storage.close());
    const checkpointer: Checkpointer = asCheckpointer(options.checkpointer ?? storage.checkpointStore!);
    const stores: PersistenceStores = options.stores ?? storage.stores!;
    const runBackends = await openRunBackends({ config, storage, stores, dataDir, log }).catch(async (err: unknown) => {
      await storage.close();
      throw err;
    });
    owned.push(() => runBackends.close());
    // `agent_storage.backend: db` on an in-memory database is refused here, before anything serves.
    const agentStore = await openAgentStore(config, { dataDir, pgPool: storage.pgPool }).catch(async (err: unknown) => {
      await runBackends.close();
      await storage.close();
      throw err;
    });
    owned.push(() => agentStore.close());
    let sandboxProvider = options.sandboxProvider;
    if (!sandboxProvider) {
      // /mnt/skills shows each user's enabled-only skills view (see attachSkills).
      const skillsMount = { skillsPath: (userId: string) => skillsViewDir(dataDir, userId), skillsContainerPath: config?.skills?.container_path };
      // Built here, at open: a `sandbox.use` no provider implements, or a provider that cannot work on
      // this machine, refuses the start (what was opened above is closed again), never the first run.
      let provider: SandboxProvider;
      await sandboxProbe;
      try {
        // The providers' lines carry their own `[deerflow] sandbox:` prefix: passed through as they are.
        provider = createSandboxProvider(config?.sandbox, { baseDir: dataDir, ...skillsMount, warn: log });
      } catch (err) {
        await agentStore.close();
        await runBackends.close();
        await storage.close();
        throw err;
      }
      sandboxProvider = provider;
      owned.push(() => provider.shutdown?.());
    }
    const runtime = new DeerFlowRuntime({ options, dataDir, configManager, checkpointer, stores, sandboxProvider, runBackends, agentStore, log });
    runtime.pgPool = storage.pgPool;
    // Owned resources close last, after every subsystem registered later.
    runtime.closeHooks.push(...owned);
    // Subsystems attach here (each registers its own close / thread-deleted / run hooks).
    runtime.recorder.addHook(createWorkspaceChangesHook({ baseDir: dataDir }));
    // The capabilities (skills, MCP, memory…) attach in one loop: services, run hooks, cleanup.
    attachCapabilities(runtime, LEAD_CAPABILITIES, { cwd, modelFactory: options.modelFactory, log });
    return runtime;
  }

  /** The current app config (re-read when config.yaml or extensions_config.json changed), or undefined without one. */
  config(): AppConfig | undefined {
    return this.configManager?.get();
  }

  /**
   * A chat model from the current config for a one-off call outside a run (follow-up suggestions),
   * built the way runs build theirs (the injected `modelFactory` when there is one). Throws a
   * ConfigError without a config, a ModelConfigError when no model is configured.
   */
  createModel(name?: string | null, options: CreateChatModelOptions = {}): CreatedChatModel {
    const config = this.config();
    if (!config) throw new ConfigError("No config is loaded, so no model can be created", { code: "config_missing" });
    return (this.options.modelFactory ?? ((cfg, n, o) => createChatModel(cfg, n, o)))(config, name, options);
  }

  /** Why the last config reload failed (the last good config stays in use), or null. */
  configError(): ConfigError | null {
    return this.configManager?.lastError ?? null;
  }

  /**
   * The agent for a run's settings (cached per config and settings, so a
   * config edit takes effect on the next run). Throws a ConfigError when no
   * config is loaded and no agent factory was injected.
   */
  buildAgent(settings: Partial<RunSettings> = {}): Promise<Agent> {
    if (this.closed) return Promise.reject(new ConfigError("The runtime is closed", { code: "runtime_closed" }));
    const full = runSettings(settings);
    const config = this.config();
    const scope: object = config ?? this.noConfigKey;
    let byKey = this.agents.get(scope);
    if (!byKey) {
      byKey = new Map();
      this.agents.set(scope, byKey);
    }
    // a custom agent's change token is part of the key: an update (from any process on a shared store) shows on the next run
    if (!full.agentName || full.isBootstrap) return this.cachedAgent(byKey, settingsKey(full), full, config);
    const signature = this.agentStore.signature(full.userId, full.agentName);
    const map = byKey;
    if (typeof signature === "string") return this.cachedAgent(map, `${settingsKey(full)}#${signature}`, full, config);
    return signature.then((sig) => this.cachedAgent(map, `${settingsKey(full)}#${sig}`, full, config));
  }

  private cachedAgent(byKey: Map<string, Promise<Agent>>, key: string, full: RunSettings, config: AppConfig | undefined): Promise<Agent> {
    const cached = byKey.get(key);
    if (cached) {
      // Keep recently used agents at the end (LRU).
      byKey.delete(key);
      byKey.set(key, cached);
      return cached;
    }
    const built = this.makeAgent(full, config);
    byKey.set(key, built);
    while (byKey.size > MAX_CACHED_AGENTS) byKey.delete(byKey.keys().next().value as string);
    const map = byKey;
    built.catch(() => {
      if (map.get(key) === built) map.delete(key);
    });
    return built;
  }

  /** Forget built agents (an extension's tools changed, e.g. an MCP server recovered). */
  invalidateAgents(): void {
    this.agents = new WeakMap();
  }

  private async makeAgent(settings: RunSettings, config: AppConfig | undefined): Promise<Agent> {
    if (this.agentFactory) {
      return this.agentFactory({
        settings,
        appConfig: config,
        checkpointer: this.checkpointer,
        dataDir: this.dataDir,
        userId: settings.userId,
        sandboxProvider: this.sandboxProvider,
      });
    }
    const lead = this.lead();
    if (!lead) {
      throw new ConfigError("No config.yaml was loaded, so no model is available. Run `deerflow init` or pass --config PATH.", {
        code: "config_not_found",
      });
    }
    return lead.makeLeadAgent(settings);
  }

  /** A thread's state at its latest (or the given) checkpoint; undefined for an unknown thread. */
  readState(threadId: string, checkpointId?: string): Promise<StateSnapshot<ThreadState> | undefined> {
    return this.state.getState(threadId, checkpointId);
  }

  /** A thread's checkpoints, newest first. */
  stateHistory(threadId: string, options?: { limit?: number; before?: string }): Promise<StateSnapshot<ThreadState>[]> {
    return this.state.getStateHistory(threadId, options);
  }

  /** Write state outside a run (a new checkpoint, source `update`). */
  updateState(threadId: string, update: Record<string, unknown>, options?: { checkpointId?: string; asNode?: string }): Promise<StateSnapshot<ThreadState>> {
    return this.state.updateState(threadId, update, options);
  }

  /**
   * Delete a thread everywhere: checkpoints (and the shared state cache), run
   * records, transcript and thread row; then the subsystems registered with
   * {@link onThreadDeleted}; then the thread's files. The caller checks
   * ownership and that no run is in flight.
   */
  async deleteThread(threadId: string, userId: string): Promise<void> {
    await this.checkpointer.deleteThread(threadId);
    await this.stores.runs.deleteByThread(threadId);
    await this.stores.messages.deleteByThread(threadId);
    await this.stores.threads.delete(threadId);
    // Subsystems first (an MCP stdio session runs with its cwd in the thread's workspace), then the files.
    for (const hook of this.threadDeletedHooks) {
      try {
        await hook(threadId, userId);
      } catch (err) {
        this.log(`[deerflow] cleanup after deleting thread ${threadId} failed: ${errorMessage(err)}`);
      }
    }
    // {dataDir}/users/{user}/threads/{id}: the parent of the thread's user-data dir
    await removeTree(path.dirname(threadPaths(this.dataDir, userId, threadId).userData));
  }

  /** Run `hook` after a thread was deleted (close its sessions, drop its caches). */
  onThreadDeleted(hook: ThreadDeletedHook): void {
    this.threadDeletedHooks.push(hook);
  }

  /** Release `hook`'s resource on {@link close} (hooks run in reverse order of registration, before the stores close). */
  onClose(hook: CloseHook): void {
    // Owned stores/sandbox were registered first and must close last: insert subsystem hooks after them.
    this.closeHooks.push(hook);
  }

  /** Close everything: subsystems (newest first), then the sandbox provider, stores and checkpointer this runtime opened. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Runs first: they are interrupted and their bookkeeping written while the stores are still open.
    await this.takeover?.stop();
    await this.runs.close();
    for (const hook of [...this.closeHooks].reverse()) {
      try {
        await hook();
      } catch (err) {
        this.log(`[deerflow] closing failed: ${errorMessage(err)}`);
      }
    }
    this.closeHooks.length = 0;
    this.agents = new WeakMap();
  }
}
