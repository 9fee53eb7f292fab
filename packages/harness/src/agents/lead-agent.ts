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
import { assembleConfiguredTools, dedupeTools, toolEntriesOrDefault } from "./tool-assembly";
import type { ToolConfigEntry } from "./tool-assembly";
import { buildLeadMiddlewares, createSharedLeadMiddlewares } from "./lead-middlewares";
import type { SharedLeadMiddlewares } from "./lead-middlewares";
import { buildSystemPrompt, escapePromptData } from "./prompt";
import { createSetupAgentTool, createUpdateAgentTool } from "./agent-tools";
import { loadCustomAgent } from "./custom-agent";
import type { CustomAgentConfig } from "./custom-agent";
import { runSettings } from "./runtime-options";
import { createLeadSubagents, mergeSkillAllowlists } from "../subagents";
import type { LeadRuntimeOptions } from "./runtime-options";
import { createDescribeSkillTool } from "../skills";
import type { SkillRegistry } from "../skills";
import { assembleDeferredTools, deferredRoutingIndex, mcpRoutingHints, routingHintsOf } from "../mcp";
import type { McpPool } from "../mcp";
import { createMemoryTools } from "../memory";
import type { MemoryService } from "../memory";

/** Where the app config comes from: a fixed object, a hot-reloading manager, or a getter. */
export type ConfigSource = AppConfig | ConfigManager | (() => AppConfig);

/**
 * Services of subsystems that shape the lead agent (tools, prompt sections,
 * middlewares). Each subsystem adds ONE optional, typed field here and reads
 * it in {@link createLeadAgentFactory}; the runtime fills them when it opens.
 */
export interface LeadAgentExtensions {
  /** Skills: the prompt's skill list and the SkillActivation / SkillToolPolicy middlewares. */
  skills?: SkillRegistry;
  /** MCP servers: their tools (awaited while building), deferred behind `tool_search` when enabled. */
  mcp?: McpPool;
  /** Long-term memory: DynamicContext's `<memory>` block, the Memory middleware's queue, the memory tools in tool mode. */
  memory?: MemoryService;
}

/** Dependencies shared by every lead agent a process builds. */
export interface LeadAgentFactoryOptions {
  /** Subsystem services (see {@link LeadAgentExtensions}); read on every build, so late attachment works. */
  extensions?: LeadAgentExtensions;
  config: ConfigSource;
  /** Runtime home (`DEER_FLOW_HOME`, default `.deer-flow`). */
  baseDir?: string;
  checkpointer?: CheckpointStore | Checkpointer;
  /** Sandbox provider; by default one is created from `config.sandbox` and reused. */
  sandboxProvider?: SandboxProvider;
  /** Memory slot of DynamicContext (filled by the memory subsystem). */
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
  const sandboxProvider = options.sandboxProvider ?? createSandboxProvider(initial.sandbox, { baseDir, warn });
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
    if (opts.agentName && !opts.isBootstrap) custom = loadCustomAgent(baseDir, opts.userId, opts.agentName);
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
    const sandboxOpts = { provider: sandboxProvider, config: sandboxConfig };
    const configured = assembleConfiguredTools(toolEntriesOrDefault(config.tools as ToolConfigEntry[] | undefined), {
      sandbox: sandboxOpts,
      groups: custom?.tool_groups ?? null,
      bashAllowed,
      warn,
    });
    const builtins: ToolDefinition[] = [createPresentFilesTool({ provider: sandboxProvider }), askClarificationTool, createListUploadedFilesTool({ provider: sandboxProvider })];
    if (created.config.supportsVision) builtins.push(createViewImageTool({ provider: sandboxProvider }));
    const agentToolOptions = { baseDir, modelNames: () => (getConfig().models ?? []).map((m) => String((m as { name?: unknown }).name)) };
    if (opts.isBootstrap) builtins.push(createSetupAgentTool(agentToolOptions));
    else if (custom) builtins.push(createUpdateAgentTool(agentToolOptions));
    const memory = options.extensions?.memory;
    if (memory && memory.config.enabled && memory.config.mode === "tool") builtins.push(...createMemoryTools(memory));
    // MCP tools follow config tools and built-ins (DeerFlow's order); a failing server only lacks its own tools.
    const mcpTools = options.extensions?.mcp
      ? await options.extensions.mcp.getTools().catch((err: unknown) => {
          warn(`MCP tools are unavailable for this run: ${(err as Error).message}`);
          return [];
        })
      : [];
    const candidates = withoutClarificationTool(dedupeTools([...configured, ...builtins, ...mcpTools, ...(options.extraTools ?? [])], warn), opts.nonInteractive);
    const deferredSetup = assembleDeferredTools(candidates, { enabled: (config.tool_search as { enabled?: boolean } | undefined)?.enabled === true });
    const tools = deferredSetup.tools;
    // Which skills this agent may see: bootstrap only while creating an agent, else the custom agent's list (null = all).
    const skillAllowlist = opts.isBootstrap ? ["bootstrap"] : (custom?.skills ?? null);
    const skillRegistry = options.extensions?.skills;
    const chainInputs = {
      config,
      skills: skillRegistry,
      agentSkills: skillAllowlist,
      baseDir,
      provider: sandboxProvider,
      shared: sharedFor(config),
      agentName: custom?.name,
      isPlanMode: opts.isPlanMode,
      supportsVision: created.config.supportsVision,
      contextWindow: created.config.contextWindow,
      resolveModel,
      memoryProvider: options.memoryProvider ?? memory?.provider,
      deferred: deferredSetup.catalogHash ? { names: deferredSetup.deferredNames, catalogHash: deferredSetup.catalogHash, routes: deferredRoutingIndex(deferredSetup) } : undefined,
      memorySink: memory,
      custom: options.customMiddleware,
    };
    // Sub-agents ("ultra" mode): the task tool, its prompt section and SubagentLimit. A child runs this
    // chain in sub-agent form on its own model (`inherit` = this one; thinking stays allowed).
    const subagents = opts.subagentEnabled
      ? createLeadSubagents({
          config,
          maxConcurrent: opts.maxConcurrentSubagents,
          maxTotal: opts.maxTotalSubagents,
          parentModelName: created.config.name,
          parentTools: () => tools,
          bashAllowed,
          sandboxProvider,
          resolveModel: (name) =>
            !name || name === created.config.name ? created.model : modelFactory(config, name, { thinkingEnabled, reasoningEffort: reasoningEffort ?? undefined } as CreateChatModelOptions).model,
          childMiddleware: (spec) =>
            buildLeadMiddlewares({
              ...chainInputs,
              custom: undefined,
              subagent: true,
              subagentTokenBudget: spec.config.tokenBudget,
              agentSkills: mergeSkillAllowlists(skillAllowlist, spec.config.skills),
            }),
        })
      : undefined;
    if (subagents) tools.push(subagents.task);
    // Deferred skill discovery: names only in the prompt, metadata through describe_skill.
    const deferredSkills = !!skillRegistry && config.skills?.deferred_discovery === true;
    if (skillRegistry && deferredSkills) tools.push(createDescribeSkillTool({ registry: skillRegistry, agentSkills: skillAllowlist }));
    const middleware = buildLeadMiddlewares({ ...chainInputs, subagentLimit: subagents?.limit });
    const skillSet = skillRegistry
      ? await skillRegistry.promptSkills(opts.userId, skillAllowlist).catch((err: unknown) => {
          warn(`skills could not be listed for the prompt: ${(err as Error).message}`);
          return undefined;
        })
      : undefined;
    const systemPrompt = buildSystemPrompt({
      skills: skillSet?.skills,
      disabledSkills: skillSet?.disabledSkills,
      skillIndex: deferredSkills ? (skillSet?.skills.map((s) => s.name) ?? []) : undefined,
      agentName: custom?.name,
      soul: custom?.soul ?? undefined,
      isCustomAgent: !!custom,
      clarification: tools.some((t) => t.name === "ask_clarification"),
      bashAvailable: tools.some((t) => t.name === "bash"),
      mounts: sandboxConfig.mounts.map((m) => ({ containerPath: m.container_path, readOnly: m.read_only })),
      subagents: subagents?.prompt,
      deferredTools: deferredSetup.deferredNames,
      mcpRoutingHints: mcpRoutingHints(routingHintsOf(tools, deferredSetup.deferredNames), escapePromptData),
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
