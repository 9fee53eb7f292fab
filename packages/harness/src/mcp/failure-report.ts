import type { McpServerConfig } from "../config";
import { maskUrlsIn } from "./secret-mask";

/** A server that could not be brought up: what the one-line report is made of. */
export interface McpFailureFacts {
  name: string;
  /** Transport as configured/detected (`stdio`, `http`, `sse`). */
  type: string;
  error: string;
  /** McpError code, when known. */
  code: string | null;
  /** The server's entry, for a fix that names its command or url. */
  config?: Pick<McpServerConfig, "command" | "args" | "url"> | null;
}

/** The server's own name prefix of an McpError message (`MCP server 'x' `), dropped in one-line reports. */
function withoutServerPrefix(name: string, error: string): string {
  const prefix = `MCP server '${name}' `;
  return error.startsWith(prefix) ? error.slice(prefix.length) : error;
}

/**
 * The fix for a failed server, chosen by what failed. Every hint names the
 * key to change in extensions_config.json, and disabling the server is
 * always a way out.
 */
export function mcpFailureFix(f: McpFailureFacts): string {
  const config = f.config;
  const key = `mcpServers.${f.name}`;
  const off = `or set ${key}.enabled: false`;
  const err = f.error;
  if (f.code === "mcp_config_invalid") return `correct ${key} in extensions_config.json (${off}).`;
  if (f.code === "mcp_init_timeout") return `check that the server answers MCP on its ${f.type === "stdio" ? "stdout" : "url"}, or raise ${key}.session_init_timeout (${off}).`;
  if (f.code === "mcp_oauth_failed" || /oauth|token endpoint/i.test(err)) return `check ${key}.oauth (token_url, client_id/client_secret or refresh_token) (${off}).`;
  if (/was not found on the PATH|ENOENT/.test(err)) {
    const cmd = config?.command ?? "the command";
    return `install ${cmd} or put its full path in ${key}.command (${off}).`;
  }
  if (f.type === "stdio") {
    const cmd = config?.command ? [config.command, ...(config.args ?? [])].join(" ") : "the server's command";
    return `run \`${maskUrlsIn(cmd)}\` by hand to see why it stops, and fix ${key}.command/args/env (${off}).`;
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|ETIMEDOUT|ECONNRESET/i.test(err)) return `start the server or correct ${key}.url${config?.url ? ` (${maskUrlsIn(config.url)})` : ""} (${off}).`;
  if (/\b40[13]\b|unauthori[sz]ed|forbidden/i.test(err)) return `check the credentials in ${key}.headers or ${key}.oauth (${off}).`;
  return `check ${key} in extensions_config.json (${off}).`;
}

/**
 * One line about a failed server, for stderr: its name and transport, what
 * failed, that its tools are missing, and a `Fix:` hint. Credentials in URLs
 * are masked.
 */
export function mcpFailureLine(f: McpFailureFacts): string {
  const what = withoutServerPrefix(f.name, f.error).replace(/\s+/g, " ").trim();
  return maskUrlsIn(`MCP server '${f.name}' (${f.type}) ${what} — its tools are missing. Fix: ${mcpFailureFix(f)}`);
}

/** Failure lines of a pool's enabled servers that are down (none when there is no pool or nothing failed). */
export function mcpFailureLines(pool: { failedServers(): McpFailureFacts[] } | undefined | null): string[] {
  return pool ? pool.failedServers().map(mcpFailureLine) : [];
}
