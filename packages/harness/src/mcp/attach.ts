import { existsSync } from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors";
import type { AppConfig, ConfigManager } from "../config";
import { parseSandboxConfig, resolveSandboxLimits, sandboxRunAs, threadDirs } from "../sandbox";
import type { SandboxConfig } from "../sandbox";
import { mcpConfigResponse, readRawExtensionsConfig, writeMcpServers } from "./config-file";
import type { McpConfigResponse, McpEntryValidator } from "./config-file";
import type { McpConfigSource } from "./config-source";
import { McpPool } from "./pool";
import { removeThreadServerDirs } from "./server-dirs";

/** What {@link attachMcp} needs from the runtime (structural, so the runtime module is not imported here). */
export interface McpHost {
  readonly dataDir: string;
  readonly configManager: ConfigManager | undefined;
  readonly extensions: { mcp?: McpPool };
  config(): AppConfig | undefined;
  invalidateAgents(): void;
  onClose(hook: () => Promise<void> | void): void;
  onThreadDeleted(hook: (threadId: string, userId: string) => Promise<void> | void): void;
}

function loaded(host: Pick<McpHost, "configManager">): { path: string; extensionsPath: string | null } | undefined {
  try {
    return host.configManager?.getLoaded();
  } catch {
    return undefined;
  }
}

/**
 * The extensions_config.json the MCP config API reads and writes: the one
 * the config loaded, else `extensions_config.json` next to config.yaml
 * (created there by the first write), else in `cwd`.
 */
export function mcpConfigPath(host: Pick<McpHost, "configManager">, cwd: string = process.cwd()): string {
  const l = loaded(host);
  if (l?.extensionsPath) return l.extensionsPath;
  return path.join(l ? path.dirname(l.path) : cwd, "extensions_config.json");
}

/** The runtime's MCP pool and the cleanup it owes (see {@link attachMcp}). */
export interface McpAttachment {
  pool: McpPool;
  /** Close a deleted thread's sessions and remove its directories in each server's launch dir. */
  threadDeleted(threadId: string, userId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Create the runtime's MCP pool: the MCP capability (capabilities/mcp.ts)
 * stores it as `runtime.extensions.mcp` (the lead agent awaits its tools
 * while building), closes a deleted thread's sessions and closes everything
 * with the runtime; cached agents are dropped when a server recovers or is
 * withdrawn. Servers come from the runtime's config (env-resolved, inline
 * `extensions:` merged); a file the config has not seen yet (created by the
 * gateway's first PUT) is read directly. Loading starts lazily with the first
 * agent build.
 */
export function attachMcp(host: Omit<McpHost, "extensions" | "onClose" | "onThreadDeleted">, options: { cwd?: string; log?: (message: string) => void } = {}): McpAttachment {
  const log = options.log ?? ((m: string) => console.warn(m));
  const configPath = () => mcpConfigPath(host, options.cwd);
  const source = (): McpConfigSource => {
    const file = configPath();
    const known = loaded(host)?.extensionsPath === file;
    if (known) return { path: file, config: host.config()?.extensions };
    return existsSync(file) ? { path: file } : { config: host.config()?.extensions };
  };
  const sandboxConfig = (): SandboxConfig => {
    try {
      return parseSandboxConfig(host.config()?.sandbox);
    } catch {
      return parseSandboxConfig({});
    }
  };
  // Detection creates and removes a probe cgroup: once per distinct sandbox.limits, not per session.
  let limitsMemo: { key: string; value: ReturnType<typeof resolveSandboxLimits>["cgroup"] } | undefined;
  const sessionCgroup = () => {
    const cfg = sandboxConfig();
    const key = JSON.stringify(cfg.limits);
    if (limitsMemo?.key !== key) limitsMemo = { key, value: resolveSandboxLimits(cfg, { runAs: sandboxRunAs(cfg) }).cgroup };
    return limitsMemo.value;
  };
  const pool = new McpPool({
    extensionsConfig: source,
    threadDirs: (userId, threadId) => threadDirs(host.dataDir, threadId, userId),
    launch: {
      dataDir: host.dataDir,
      // Sandboxed servers run as the bash sandbox's uid when the service is root.
      runAs: sandboxRunAs(sandboxConfig()),
      // Every thread's data and the writable custom mounts: what the agent's sandbox can change on the host.
      agentWritable: () => [path.join(host.dataDir, "users"), ...sandboxConfig().mounts.filter((m) => !m.read_only).map((m) => path.resolve(m.host_path))],
      // Each sandboxed session in its own cgroup with the bash sandbox's pids/memory/CPU limits.
      cgroup: sessionCgroup,
      warn: (m) => log(`[deerflow] ${m}`),
    },
    logger: { warn: (m) => log(`[deerflow] ${m}`), info: (m) => log(`[deerflow] ${m}`) },
    onToolsChanged: () => host.invalidateAgents(),
    configPath,
  });
  return {
    pool,
    async threadDeleted(threadId, userId) {
      await pool.closeThread(threadId, userId).catch((err: unknown) => log(`[deerflow] MCP: closing sessions of thread ${threadId} failed: ${errorMessage(err)}`));
      // The thread's own home and cache in each server's launch directory go with it.
      const left = await removeThreadServerDirs(host.dataDir, threadDirs(host.dataDir, threadId, userId).userData);
      for (const d of left) log(`[deerflow] MCP: could not remove ${d} of deleted thread ${threadId}`);
    },
    close: () => pool.close(),
  };
}

/** The MCP config of a runtime as the gateway's `GET /api/mcp/config` shows it (secrets masked). */
export function readMcpConfig(host: McpHost): McpConfigResponse {
  return mcpConfigResponse(readRawExtensionsConfig(host.extensions.mcp?.configFile() ?? mcpConfigPath(host)));
}

/**
 * Replace a runtime's MCP servers (masked secrets merged back, other keys
 * kept, atomic write) and drop cached tools and agents so the next run
 * loads them. `validate` is the gateway's stdio launch validation; embedded
 * callers are trusted like an edit of the file and may omit it.
 */
export function updateMcpConfig(
  host: McpHost,
  servers: Record<string, Record<string, unknown>>,
  validate: McpEntryValidator = () => undefined,
): McpConfigResponse {
  const raw = writeMcpServers(host.extensions.mcp?.configFile() ?? mcpConfigPath(host), servers, validate);
  host.extensions.mcp?.reset();
  host.invalidateAgents();
  return mcpConfigResponse(raw);
}
