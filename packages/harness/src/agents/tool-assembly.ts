import { ConfigError } from "../errors";
import {
  createBashTool,
  createGlobTool,
  createGrepTool,
  createLsTool,
  createReadFileTool,
  createStrReplaceTool,
  createWriteFileTool,
} from "../builtins/sandbox-tools";
import type { SandboxToolOptions } from "../builtins/sandbox-tools";
import type { ToolDefinition } from "../tools";
import { LEAD_CAPABILITIES } from "../capabilities";
import type { ConfigToolProvider } from "../capabilities";
import type { WebToolContext } from "../web-research";

/** The capabilities that resolve `tools:` entries (web research), in capability order. */
const CONFIG_TOOL_PROVIDERS: readonly ConfigToolProvider[] = LEAD_CAPABILITIES.flatMap((c) => ("configTools" in c && c.configTools ? [c.configTools] : []));

/** A `tools:` entry of config.yaml. */
export interface ToolConfigEntry {
  name: string;
  group?: string | null;
  use: string;
  [key: string]: unknown;
}

type Factory = (opts: SandboxToolOptions) => ToolDefinition;

const SANDBOX_FACTORIES: Record<string, Factory> = {
  bash: createBashTool,
  ls: createLsTool,
  glob: createGlobTool,
  grep: createGrepTool,
  read_file: createReadFileTool,
  write_file: createWriteFileTool,
  str_replace: createStrReplaceTool,
};

/** Tool `use:` values we resolve: our ids and DeerFlow's class paths. */
export function builtinToolUses(): string[] {
  const out: string[] = [];
  for (const name of Object.keys(SANDBOX_FACTORIES)) out.push(`deerflow.sandbox.tools:${name}_tool`, `sandbox:${name}`);
  for (const provider of CONFIG_TOOL_PROVIDERS) out.push(...provider.uses());
  return out.sort();
}

function sandboxToolName(use: string): string | undefined {
  const m = /^deerflow\.sandbox\.tools:([a-z_]+)_tool$/.exec(use) ?? /^sandbox:([a-z_]+)$/.exec(use);
  return m && SANDBOX_FACTORIES[m[1]] ? m[1] : undefined;
}

/** DeerFlow community tools we recognise but do not ship yet (skipped with a warning). */
const KNOWN_COMMUNITY = /^deerflow\.community\.[a-z0-9_]+\.tools:[a-z_]+$/;

/** Options of {@link assembleConfiguredTools}. */
export interface AssembleToolsOptions {
  sandbox: SandboxToolOptions;
  /** Only entries of these groups (a custom agent's `tool_groups`); undefined = all. */
  groups?: string[] | null;
  /** Whether bash may run (false for the local provider without `allow_host_bash`). */
  bashAllowed: boolean;
  warn(message: string): void;
  /** Code-only seams of the web tools (a DNS resolver for tests); never read from config. */
  web?: Omit<WebToolContext, "warn">;
}

/**
 * Resolve config `tools:` entries by `use:` (DeerFlow's step 1 of tool
 * assembly): filter by `groups`, drop bash-group tools when bash is not
 * allowed, map DeerFlow class paths to our tools. Unknown `use` values are a
 * ConfigError naming the entry; recognised-but-unshipped community tools are
 * skipped with a warning so DeerFlow's example config still loads.
 */
export function assembleConfiguredTools(entries: readonly ToolConfigEntry[], options: AssembleToolsOptions): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  entries.forEach((entry, i) => {
    if (options.groups && !(entry.group && options.groups.includes(entry.group))) return;
    const sandboxName = sandboxToolName(entry.use);
    const isBash = entry.group === "bash" || sandboxName === "bash";
    if (isBash && !options.bashAllowed) return;
    if (sandboxName) {
      const def = SANDBOX_FACTORIES[sandboxName](options.sandbox);
      if (entry.name !== def.name) {
        options.warn(`tools[${i}]: configured name '${entry.name}' differs from the tool's own name '${def.name}'; using '${def.name}'`);
      }
      out.push(def);
      return;
    }
    for (const provider of CONFIG_TOOL_PROVIDERS) {
      const def = provider.resolve(entry, i, { ...options.web, warn: options.warn });
      if (def) {
        out.push(def);
        return;
      }
    }
    if (KNOWN_COMMUNITY.test(entry.use)) {
      options.warn(`tools[${i}] '${entry.name}' (${entry.use}) is not available in this version yet; skipped`);
      return;
    }
    throw new ConfigError(
      `tools[${i}].use: unknown tool '${entry.use}' for '${entry.name}'. Supported: ${builtinToolUses().join(", ")} (DeerFlow community tools are skipped with a warning)`,
      { details: { key: `tools[${i}].use`, value: entry.use } },
    );
  });
  return out;
}

/** Dedupe by name: first wins, later duplicates are dropped with a warning. */
export function dedupeTools(tools: readonly ToolDefinition[], warn: (m: string) => void): ToolDefinition[] {
  const seen = new Set<string>();
  const out: ToolDefinition[] = [];
  for (const t of tools) {
    if (seen.has(t.name)) {
      warn(`duplicate tool '${t.name}' removed`);
      continue;
    }
    seen.add(t.name);
    out.push(t);
  }
  return out;
}

/**
 * The sandbox tool set a config gets when its `tools:` key is ABSENT:
 * DeerFlow's standard entries for `ls`, `read_file`, `glob`, `grep`
 * (group `file:read`), `write_file`, `str_replace` (`file:write`) and `bash`
 * (`bash`, still dropped when bash is not allowed). An explicit `tools: []`
 * means no configured tools at all. Web tools are not defaults: they reach
 * the network, which a config must opt into.
 */
export const DEFAULT_TOOL_ENTRIES: readonly ToolConfigEntry[] = Object.freeze(
  [
    { name: "ls", group: "file:read", use: "deerflow.sandbox.tools:ls_tool" },
    { name: "read_file", group: "file:read", use: "deerflow.sandbox.tools:read_file_tool" },
    { name: "glob", group: "file:read", use: "deerflow.sandbox.tools:glob_tool", max_results: 200 },
    { name: "grep", group: "file:read", use: "deerflow.sandbox.tools:grep_tool", max_results: 100 },
    { name: "write_file", group: "file:write", use: "deerflow.sandbox.tools:write_file_tool" },
    { name: "str_replace", group: "file:write", use: "deerflow.sandbox.tools:str_replace_tool" },
    { name: "bash", group: "bash", use: "deerflow.sandbox.tools:bash_tool" },
  ].map((e) => Object.freeze(e)),
);

/** The `tools:` entries to assemble: the configured list, or {@link DEFAULT_TOOL_ENTRIES} when the key is absent (undefined/null). */
export function toolEntriesOrDefault(tools: readonly ToolConfigEntry[] | null | undefined): readonly ToolConfigEntry[] {
  return tools ?? DEFAULT_TOOL_ENTRIES;
}
