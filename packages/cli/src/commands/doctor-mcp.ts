import type { AppConfig } from "@deerflow-ts/harness/config";
import { checkMcpServers } from "@deerflow-ts/harness/mcp";
import { parseSandboxConfig, sandboxRunAs } from "@deerflow-ts/harness/sandbox";
import type { Finding } from "./doctor";

/**
 * Launch-check every enabled MCP server: start it as the runtime would, list
 * its tools, close it (each bounded by the doctor's timeout). A server that
 * does not come up is an error — `deerflow run` would go on without its
 * tools. Disabled servers are not started.
 */
export async function mcpFindings(config: AppConfig, opts: { dataDir: string; timeoutMs: number; env?: Record<string, string | undefined> }): Promise<Finding[]> {
  const enabled = Object.values(config.extensions.mcpServers).filter((s) => s.enabled).length;
  if (!enabled) return [];
  let runAs: { uid: number; gid: number } | undefined;
  try {
    runAs = sandboxRunAs(parseSandboxConfig(config.sandbox));
  } catch {
    // an invalid sandbox section is reported by the config check
  }
  const checks = await checkMcpServers(config.extensions, { timeoutMs: opts.timeoutMs, dataDir: opts.dataDir, env: opts.env, launch: { runAs } });
  return checks.map((c): Finding =>
    c.ok
      ? { check: "mcp", level: "ok", message: `'${c.name}' (${c.type}) started and listed ${c.tools.length} tool(s)${c.tools.length ? `: ${c.tools.slice(0, 8).join(", ")}${c.tools.length > 8 ? ", …" : ""}` : ""}` }
      : { check: "mcp", level: "error", message: (c.line ?? c.error ?? "").split(" Fix: ")[0], fix: c.fix ?? undefined },
  );
}
