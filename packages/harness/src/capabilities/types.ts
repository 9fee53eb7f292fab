/**
 * The one shape every capability (sub-agents, web research, skills, MCP,
 * memory) plugs in with. The runtime attaches each in a loop
 * ({@link attachCapabilities}); the lead agent factory asks each for its part
 * of an agent ({@link Capability.forAgent}) and folds the parts into tools,
 * middleware chain and prompt. Adding a capability is one object in
 * `capabilities/registry.ts`: nothing in the runtime or the factory names it.
 */
import type { CustomAgentConfig, LeadRuntimeOptions, SystemPromptOptions } from "../agents";
import type { AppConfig, ConfigManager } from "../config";
import type { MemoryProvider } from "../middlewares";
import type { ChatModel, CreateChatModelOptions, CreatedChatModel } from "../models";
import type { AgentMiddleware } from "../runtime";
import type { SandboxProvider } from "../sandbox";
import type { ToolDefinition } from "../tools";
import type { WebToolContext } from "../web-research";
import type { SlottedMiddleware } from "./chain-slots";

/** A hook that follows runs (structurally the run recorder's hook: failures are logged, never fatal). */
export interface CapabilityRunHook {
  readonly name: string;
  runStarted?(run: { runId: string; threadId: string; userId: string }): void | Promise<void>;
}

/** What a capability gets from the runtime it attaches to (structural: the runtime module is not imported). */
export interface CapabilityHost {
  readonly dataDir: string;
  readonly configManager: ConfigManager | undefined;
  config(): AppConfig | undefined;
  /** Drop cached agents (a capability's tools or prompt changed). */
  invalidateAgents(): void;
}

/** Shared options of every capability's attach (the runtime's own options). */
export interface CapabilityAttachOptions {
  cwd: string;
  /** The runtime's model factory (tests inject scripted models); absent = the configured providers. */
  modelFactory?: (config: AppConfig, name: string | null | undefined, options: CreateChatModelOptions) => CreatedChatModel;
  log: (message: string) => void;
}

/**
 * A capability attached to one runtime: its service (stored under the
 * capability's name in `runtime.extensions`, where the lead agent and the
 * gateway find it), its run hooks and the cleanup it owes.
 */
export interface CapabilityAttachment<S> {
  service: S;
  runHooks?: CapabilityRunHook[];
  /** Called after a thread was deleted (before its files are removed). */
  threadDeleted?(threadId: string, userId: string): void | Promise<void>;
  /** Release the service when the runtime closes (newest attachment first). */
  close?(): void | Promise<void>;
}

/** Which form of the chain is being built: the lead's, or a sub-agent's (the lead chain without the lead-only slots). */
export type ChainForm =
  | { subagent: false }
  | {
      subagent: true;
      /** The sub-agent type's own skill list (merged with the lead's allowlist). */
      skills?: string[] | null;
      /** `subagents.token_budget` / `subagents.agents.<name>.token_budget` overrides. */
      tokenBudget?: Record<string, unknown> | null;
    };

/** Prompt sections a capability fills (the section ORDER is the prompt's own, DeerFlow's). */
export type PromptSections = Partial<Pick<SystemPromptOptions, "skills" | "disabledSkills" | "skillIndex" | "deferredTools" | "mcpRoutingHints" | "subagents">>;

/** What the lead agent factory knows about the agent it is building, for every capability alike. */
export interface AgentBuildContext {
  config: AppConfig;
  settings: LeadRuntimeOptions;
  /** The custom agent the run names (absent for the default agent and while bootstrapping one). */
  customAgent?: CustomAgentConfig;
  /** Skills this agent may use: `["bootstrap"]` while creating an agent, else the custom agent's list (null = all). */
  agentSkills: string[] | null;
  /** The lead's resolved model name (what a sub-agent's `inherit` means). */
  modelName: string;
  /** A chat model by configured name for a child (`undefined` or the lead's name = the lead's own model). */
  childModel(name: string | undefined): ChatModel;
  sandboxProvider: SandboxProvider;
  /** Whether commands may run (isolated provider or `allow_host_bash`). */
  bashAllowed: boolean;
  /** The lead's final tool list (valid once the agent is assembled; read when a tool runs). */
  finalTools(): readonly ToolDefinition[];
  /** The chain in sub-agent form, capabilities' slots included (for a child agent). */
  subagentChain(form: Extract<ChainForm, { subagent: true }>): AgentMiddleware[];
  warn(message: string): void;
}

/**
 * One capability's contribution to one agent. Tools join in three steps, so
 * DeerFlow's tool order holds: `tools` are candidates (after config tools and
 * built-ins, deduplicated with them), `arrangeTools` may rewrite the whole
 * candidate list (MCP defers tools behind `tool_search`), `addTools` come
 * last (the `task` tool, `describe_skill`). Middlewares carry their slot; the
 * prompt sections are read from the final tool list.
 */
export interface AgentPart {
  tools?: ToolDefinition[];
  arrangeTools?(tools: ToolDefinition[]): ToolDefinition[];
  addTools?: ToolDefinition[];
  middlewares?(form: ChainForm): SlottedMiddleware[];
  promptSections?(tools: readonly ToolDefinition[]): PromptSections | Promise<PromptSections>;
  /** What DynamicContext injects as `<memory>` (the core middleware reads it; one capability provides it). */
  memoryProvider?: MemoryProvider;
}

/** Resolves `tools:` entries of config.yaml by `use:` (web research's community tool paths). */
export interface ConfigToolProvider {
  /** The `use:` values it resolves (for the error that lists what is supported). */
  uses(): string[];
  /** The tool of one entry, or undefined when the entry is not this provider's. */
  resolve(entry: { name: string; use: string; [key: string]: unknown }, index: number, context: WebToolContext): ToolDefinition | undefined;
}

/**
 * A capability. Every member is optional except the name: web research only
 * resolves config tools, sub-agents only contribute to agents, skills, MCP
 * and memory also attach a service to the runtime.
 * @typeParam S its runtime service (none: `never`).
 * @typeParam N its name, which is also its key in `runtime.extensions`.
 */
export interface Capability<S = never, N extends string = string> {
  readonly name: N;
  /** Create the service of one runtime (undefined = off by configuration). Errors turn the capability off with a log line. */
  attach?(host: CapabilityHost, options: CapabilityAttachOptions): CapabilityAttachment<S> | undefined;
  configTools?: ConfigToolProvider;
  /** This capability's part of one agent (undefined = nothing to add). `service` is what attach stored, if anything. */
  forAgent?(ctx: AgentBuildContext, service: S | undefined): AgentPart | undefined | Promise<AgentPart | undefined>;
}

/** Any capability, whatever its service. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCapability = Capability<any, string>;

type ServiceName<C> = C extends Capability<infer S, infer N> ? ([S] extends [never] ? never : N) : never;
type ServiceOf<C> = C extends Capability<infer S, string> ? S : never;

/** The services of a list of capabilities, keyed by name (`{skills?: SkillRegistry; mcp?: McpPool; …}`). */
export type ServicesOf<Caps extends readonly AnyCapability[]> = { [C in Caps[number] as ServiceName<C>]?: ServiceOf<C> };
