/** The MCP REST API (`/api/mcp/config`, `/api/mcp/status`). */
import { ApiError, csrfHeader } from "./rest";

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

async function request<T>(method: string, path: string, body?: unknown, base = ""): Promise<T> {
  const headers: Record<string, string> = { ...csrfHeader() };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const payload = (await res.json().catch(() => ({}))) as { detail?: unknown };
  if (!res.ok) throw new ApiError(res.status, typeof payload.detail === "string" ? payload.detail : `${res.status} ${res.statusText}`);
  return payload as T;
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
