import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ConfigEnv, ExtensionsConfig, McpServerConfig } from "../config";
import { threadDirs } from "../sandbox";
import { mcpFailureFix, mcpFailureLine } from "./failure-report";
import type { McpLaunchSettings } from "./launch-plan";
import { McpPool } from "./pool";

/** The outcome of starting one enabled server (see {@link checkMcpServers}). */
export interface McpLaunchCheck {
  name: string;
  type: string;
  ok: boolean;
  /** Tool names it listed (prefixed as the agent sees them). */
  tools: string[];
  /** What failed (null when ok). */
  error: string | null;
  code: string | null;
  /** The one-line report (as `deerflow run` prints it) and its fix; null when ok. */
  line: string | null;
  fix: string | null;
}

/** Options of {@link checkMcpServers}. */
export interface McpLaunchCheckOptions {
  /** Longest wait for one server to start and list its tools (a server's own smaller session_init_timeout wins). */
  timeoutMs: number;
  /** Data dir whose launch directories the servers start in (default: a temp dir, removed afterwards). */
  dataDir?: string;
  /** Environment `$VAR`s resolve from (default `process.env`). */
  env?: ConfigEnv;
  /** Launch settings beyond the data dir (sandbox mode, uid), as the runtime would use them. */
  launch?: Omit<McpLaunchSettings, "dataDir">;
}

/**
 * Start every enabled MCP server the way the runtime does (the official SDK
 * client, the same launch plan), list its tools and close it. Each server is
 * bounded by `timeoutMs`; they start in parallel. Disabled servers are not
 * started and not reported.
 */
export async function checkMcpServers(extensions: ExtensionsConfig, options: McpLaunchCheckOptions): Promise<McpLaunchCheck[]> {
  const limitS = Math.max(0.001, options.timeoutMs / 1000);
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, sc] of Object.entries(extensions.mcpServers)) {
    if (!sc.enabled) continue;
    const own = sc.session_init_timeout;
    servers[name] = { ...sc, session_init_timeout: own != null && own > 0 ? Math.min(own, limitS) : limitS };
  }
  if (!Object.keys(servers).length) return [];
  const tempDir = options.dataDir ? undefined : mkdtempSync(path.join(os.tmpdir(), "deerflow-mcp-check-"));
  const dataDir = options.dataDir ?? (tempDir as string);
  const config: ExtensionsConfig = { ...extensions, mcpServers: servers };
  const pool = new McpPool({
    extensionsConfig: () => ({ config }),
    threadDirs: (userId, threadId) => threadDirs(dataDir, threadId, userId),
    launch: { ...(options.launch ?? {}), dataDir },
    env: options.env,
    // a check starts each server once: no background retry while it runs
    retryInitialMs: 2_147_483_647,
  });
  try {
    await pool.getTools();
    const failed = new Map(pool.failedServers().map((f) => [f.name, f]));
    return pool.status().map((st) => {
      const f = failed.get(st.name);
      if (!f) return { name: st.name, type: st.type, ok: true, tools: st.tools, error: null, code: null, line: null, fix: null };
      return { name: st.name, type: f.type, ok: false, tools: [], error: f.error, code: f.code, line: mcpFailureLine(f), fix: mcpFailureFix(f) };
    });
  } finally {
    await pool.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}
