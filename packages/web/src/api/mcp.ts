/** The MCP REST API (`/api/mcp/config`, `/api/mcp/status`). */
import { jsonRequest } from "./http";

/** One `mcp_servers` entry as the gateway shows it (secrets masked). */
export interface McpServerConfig {
  enabled: boolean;
  type: string;
  command?: string | null;
  args?: string[];
  url?: string | null;
  description: string;
  [key: string]: unknown;
}

/** Per-server status of the gateway's MCP pool. */
export interface McpServerStatus {
  name: string;
  enabled: boolean;
  type: string;
  description: string;
  state: "disabled" | "connecting" | "connected" | "failed";
  connected: boolean;
  tools: string[];
  last_error: string | null;
  failures: number;
  next_retry_at: string | null;
  sessions: number;
}

function request<T>(method: string, path: string, body?: unknown, base = ""): Promise<T> {
  return jsonRequest<T>(method, path, body, base);
}

/** `GET /api/mcp/config`. */
export async function fetchMcpConfig(base = ""): Promise<Record<string, McpServerConfig>> {
  return (await request<{ mcp_servers: Record<string, McpServerConfig> }>("GET", "/mcp/config", undefined, base)).mcp_servers;
}

/** `GET /api/mcp/status` (`wait`: until servers still loading have settled, bounded by the gateway). */
export async function fetchMcpStatus(wait = false, base = ""): Promise<McpServerStatus[]> {
  return (await request<{ servers: McpServerStatus[] }>("GET", `/mcp/status${wait ? "?wait=true" : ""}`, undefined, base)).servers;
}

/** `PATCH /api/mcp/config` `{server_name, enabled}`. */
export async function setMcpServerEnabled(name: string, enabled: boolean, base = ""): Promise<void> {
  await request("PATCH", "/mcp/config", { server_name: name, enabled }, base);
}
