import { resolve } from "node:path";
import { ConfigManager } from "../config";
import type { AppConfig } from "../config";
import { createChatModel } from "../models";
import type { CreatedChatModel, CreateChatModelOptions } from "../models";
import { createAgent } from "../runtime";
import type { Agent, AgentMiddleware } from "../runtime";
import { createSandboxProvider, parseSandboxConfig } from "../sandbox";
import type { SandboxProvider } from "../sandbox";
import type { CheckpointStore, Checkpointer } from "../checkpoints";
import { asCheckpointer } from "../checkpoints";
import { threadStateSchema } from "../state";
import type { ThreadState } from "../state";
import type { ToolDefinition } from "../tools";
import type { MemoryProvider } from "../middlewares";
import {
  askClarificationTool,
  createListUploadedFilesTool,
  createPresentFilesTool,
  createViewImageTool,
  withoutClarificationTool,
} from "../builtins";
import { agentParts, arrangeTools, LEAD_CAPABILITIES, partMiddlewares, partPromptSections, partTools } from "../capabilities";
import type { AgentBuildContext, AnyCapability, ChainForm, LeadCapabilityServices } from "../capabilities";
import { assembleConfiguredTools, dedupeTools, toolEntriesOrDefault } from "./tool-assembly";
import type { ToolConfigEntry } from "./tool-assembly";
import { buildLeadMiddlewares, createSharedLeadMiddlewares } from "./lead-middlewares";
import type { LeadMiddlewareInputs, SharedLeadMiddlewares } from "./lead-middlewares";
import { buildSystemPrompt } from "./prompt";
import { createSetupAgentTool, createUpdateAgentTool } from "./agent-tools";
import { FileAgentStore } from "./store/file-store";
import type { AgentStore } from "./store/types";
import type { CustomAgentConfig } from "./custom-agent";
import { runSettings } from "./runtime-options";
import type { LeadRuntimeOptions } from "./runtime-options";

/** Where the app config comes from: a fixed object, a hot-reloading manager, or a getter. */
export type ConfigSource = AppConfig | ConfigManager | (() => AppConfig);

/**
 * The runtime services of the lead agent's capabilities, by capability name
 * (`skills`, `mcp`, `memory`): derived from the capability list, so a new
 * capability with a service gets its key here without touching this file.
 * The runtime's attach loop fills them; the factory reads them on every build.
 */
export type LeadAgentExtensions = LeadCapabilityServices;

/** Dependencies shared by every lead agent a process builds. */
export interface LeadAgentFactoryOptions {
  /** Capability services (see {@link LeadAgentExtensions}); read on every build, so late attachment works. */
  extensions?: LeadAgentExtensions;
  /** The capabilities that shape each agent (default {@link LEAD_CAPABILITIES}). */
  capabilities?: readonly AnyCapability[];
  config: ConfigSource;
  /** Runtime home (`DEER_FLOW_HOME`, default `.deer-flow`). */
  baseDir?: string;
  /** Where custom agents are read (`agent_storage:`); default: the files under `baseDir`. */
  agentStore?: AgentStore;
  checkpointer?: CheckpointStore | Checkpointer;
  /** Sandbox provider; by default one is created from `config.sandbox` and reused. */
  sandboxProvider?: SandboxProvider;
  /** Memory slot of DynamicContext (default: the memory capability's provider). */
  memoryProvider?: MemoryProvider;
  /** Programmatic middlewares (DeerFlow's `custom_middlewares`). */
  customMiddleware?: AgentMiddleware[];
  /** Extra tools for every lead agent. */
  extraTools?: ToolDefinition[];
  /** Build chat models (default: `createChatModel` over the config). Tests inject scripted models here. */
  modelFactory?: (config: AppConfig, name: string | null | undefined, options: CreateChatModelOptions) => CreatedChatModel;
  warn?(message: string): void;
}

/** A lead agent plus what DeerFlow records in `config.metadata`. */
export interface LeadAgent extends Agent<ThreadState> {
  readonly metadata: {
    agent_name: string | null;
    model_name: string;
    thinking_enabled: boolean;
    reasoning_effort: string | null;
    is_plan_mode: boolean;
    subagent_enabled: boolean;
    tool_groups: string[] | null;
  };
}

/** Builds lead agents per run (DeerFlow's `make_lead_agent`), sharing stateful parts across runs. */
export interface LeadAgentFactory {
  /**
   * Build the lead agent for parsed run settings ({@link readRuntimeOptions}
   * or {@link runSettings}). Async: tools from extensions (MCP servers) are
   * loaded while building.
   */
  makeLeadAgent(settings?: Partial<LeadRuntimeOptions>): Promise<LeadAgent>;
  /** The current app config. */
  config(): AppConfig;
  readonly sandboxProvider: SandboxProvider;
  readonly checkpointer: Checkpointer;
  readonly baseDir: string;
  close(): Promise<void>;
}

function configGetter(source: ConfigSource): () => AppConfig {
  if (source instanceof ConfigManager) return () => source.get();
  if (typeof source === "function") return source;
  return () => source;
}

/** The lead's built-in tools: present_files, ask_clarification, list_uploaded_files, view_image (vision models), setup_agent / update_agent. */
function leadBuiltinTools(o: { provider: SandboxProvider; vision: boolean; agentTool: "setup" | "update" | null; baseDir: string; store: AgentStore; config: () => AppConfig }): ToolDefinition[] {
  const out: ToolDefinition[] = [createPresentFilesTool({ provider: o.provider }), askClarificationTool, createListUploadedFilesTool({ provider: o.provider })];
  if (o.vision) out.push(createViewImageTool({ provider: o.provider }));
  const agentToolOptions = { baseDir: o.baseDir, store: o.store, modelNames: () => (o.config().models ?? []).map((m) => String((m as { name?: unknown }).name)) };
  if (o.agentTool === "setup") out.push(createSetupAgentTool(agentToolOptions));
  else if (o.agentTool === "update") out.push(createUpdateAgentTool(agentToolOptions));
  return out;
}

/**
 * Create the per-process lead agent factory. `makeLeadAgent(settings)`
 * resolves the model, assembles tools, the middleware chain and the static
 * prompt for one run's settings.
 */
export function createLeadAgentFactory(options: LeadAgentFactoryOptions): LeadAgentFactory {
  const getConfig = configGetter(options.config);
  const baseDir = resolve(options.baseDir ?? process.env.DEER_FLOW_HOME ?? ".deer-flow");
  const warn = options.warn ?? ((m: string) => console.warn(`[deerflow] ${m}`));
  const modelFactory = options.modelFactory ?? ((cfg, name, opts) => createChatModel(cfg, name, opts));
  const checkpointer = asCheckpointer(options.checkpointer);
  const initial = getConfig();
  // The providers' lines start with `[deerflow]` already and `warn` adds it: the provider's copy is dropped.
  const sandboxProvider = options.sandboxProvider ?? createSandboxProvider(initial.sandbox, { baseDir, warn: (m) => warn(m.replace(/^\[deerflow\] /, "")) });
  const capabilities = options.capabilities ?? LEAD_CAPABILITIES;
  const agentStore = options.agentStore ?? new FileAgentStore(baseDir);
  const shared = new WeakMap<AppConfig, SharedLeadMiddlewares>();
  const sharedFor = (cfg: AppConfig) => {
    let s = shared.get(cfg);
    if (!s) {
      s = createSharedLeadMiddlewares(cfg);
      shared.set(cfg, s);
    }
    return s;
  };

  async function makeLeadAgent(settings: Partial<LeadRuntimeOptions> = {}): Promise<LeadAgent> {
    const config = getConfig();
    const opts = runSettings(settings);
    let custom: CustomAgentConfig | undefined;
    // a bootstrap run creates the agent it names: there is nothing to load yet
    if (opts.agentName && !opts.isBootstrap) custom = await agentStore.get(opts.userId, opts.agentName);
    // Undefined = DeerFlow's default (on, silently off for models without supports_thinking).
    const thinkingEnabled = opts.thinkingEnabled ?? custom?.thinking_enabled ?? undefined;
    const reasoningEffort = opts.reasoningEffort ?? custom?.reasoning_effort ?? undefined;
    const created = modelFactory(config, opts.modelName ?? null, {
      thinkingEnabled,
      reasoningEffort: reasoningEffort ?? undefined,
      agentModel: custom?.model ?? undefined,
      overrides: custom?.model_settings ?? undefined,
    } as CreateChatModelOptions);
    const resolveModel = (name: string) => modelFactory(config, name, { thinkingEnabled: false }).model;
    const sandboxConfig = parseSandboxConfig(config.sandbox);
    const bashAllowed = sandboxProvider.kind !== "local" || sandboxConfig.allow_host_bash;

    // Each capability's part of this agent; the chain in sub-agent form reads the same parts.
    let tools: ToolDefinition[] = [];
    let chainInputs: LeadMiddlewareInputs;
    const chainFor = (form: ChainForm): AgentMiddleware[] =>
      buildLeadMiddlewares({
        ...chainInputs,
        capabilities: partMiddlewares(parts, form),
        ...(form.subagent ? { custom: undefined, subagent: true, subagentTokenBudget: form.tokenBudget } : {}),
      });
    const ctx: AgentBuildContext = {
      config,
      settings: opts,
      customAgent: custom,
      agentSkills: opts.isBootstrap ? ["bootstrap"] : (custom?.skills ?? null),
      modelName: created.config.name,
      // A child on `inherit` (or the lead's name) shares the lead's model; others keep the run's thinking settings.
      childModel: (name) =>
        !name || name === created.config.name ? created.model : modelFactory(config, name, { thinkingEnabled, reasoningEffort: reasoningEffort ?? undefined } as CreateChatModelOptions).model,
      sandboxProvider,
      bashAllowed,
      finalTools: () => tools,
      subagentChain: chainFor,
      warn,
    };
    const parts = await agentParts(capabilities, options.extensions ?? {}, ctx);

    // Tools in DeerFlow's order: config tools, built-ins, the capabilities' tools, extra tools; then the
    // capabilities arrange them (deferred MCP tools) and append theirs (task, describe_skill).
    const configured = assembleConfiguredTools(toolEntriesOrDefault(config.tools as ToolConfigEntry[] | undefined), {
      sandbox: { provider: sandboxProvider, config: sandboxConfig },
      groups: custom?.tool_groups ?? null,
      bashAllowed,
      warn,
    });
    const builtins = leadBuiltinTools({ provider: sandboxProvider, vision: created.config.supportsVision, agentTool: opts.isBootstrap ? "setup" : custom ? "update" : null, baseDir, store: agentStore, config: getConfig });
    const candidates = withoutClarificationTool(dedupeTools([...configured, ...builtins, ...partTools(parts), ...(options.extraTools ?? [])], warn), opts.nonInteractive);
    tools = arrangeTools(parts, candidates);

    chainInputs = {
      config,
      baseDir,
      provider: sandboxProvider,
      shared: sharedFor(config),
      agentName: custom?.name,
      isPlanMode: opts.isPlanMode,
      supportsVision: created.config.supportsVision,
      contextWindow: created.config.contextWindow,
      resolveModel,
      memoryProvider: options.memoryProvider ?? parts.find((p) => p.memoryProvider)?.memoryProvider,
      custom: options.customMiddleware,
    };
    const middleware = chainFor({ subagent: false });
    const systemPrompt = buildSystemPrompt({
      ...(await partPromptSections(parts, tools)),
      agentName: custom?.name,
      soul: custom?.soul ?? undefined,
      isCustomAgent: !!custom,
      clarification: tools.some((t) => t.name === "ask_clarification"),
      bashAvailable: tools.some((t) => t.name === "bash"),
      mounts: sandboxConfig.mounts.map((m) => ({ containerPath: m.container_path, readOnly: m.read_only })),
    });
    const agent = createAgent<ThreadState>({
      model: created.model,
      tools,
      middleware: middleware as AgentMiddleware<ThreadState>[],
      systemPrompt,
      stateSchema: threadStateSchema,
      checkpointer,
      name: "lead_agent",
      recursionLimit: Math.min(config.max_recursion_limit ?? 1000, 1000),
      onDuplicateTool: warn,
    });
    return Object.assign(agent, {
      metadata: {
        agent_name: custom?.name ?? null,
        model_name: created.config.name,
        thinking_enabled: created.config.thinkingEnabled,
        reasoning_effort: created.config.reasoningEffort ?? null,
        is_plan_mode: opts.isPlanMode,
        subagent_enabled: opts.subagentEnabled,
        tool_groups: custom?.tool_groups ?? null,
      },
    });
  }

  return {
    makeLeadAgent,
    config: getConfig,
    sandboxProvider,
    checkpointer,
    baseDir,
    async close() {
      await sandboxProvider.shutdown?.();
    },
  };
}
