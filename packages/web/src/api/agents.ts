/** The custom-agents REST API (`/api/agents` of the gateway). */
import { jsonRequest } from "./http";

/** DeerFlow's `AgentResponse`. */
export interface AgentInfo {
  name: string;
  description: string;
  model: string | null;
  tool_groups: string[] | null;
  skills: string[] | null;
  thinking_enabled: boolean | null;
  reasoning_effort: "low" | "medium" | "high" | null;
  soul: string | null;
}

/** Fields a create/update sends. */
export type AgentDraft = Partial<Omit<AgentInfo, "name">> & { name?: string };

function call<T>(method: string, path: string, body?: unknown, base = ""): Promise<T> {
  return jsonRequest<T>(method, path, body, base);
}

/** `GET /api/features` → whether the agents API is on. */
export async function agentsApiEnabled(base = ""): Promise<boolean> {
  const f = await call<{ agents_api?: { enabled?: boolean } }>("GET", "/features", undefined, base);
  return f.agents_api?.enabled === true;
}

/** `GET /api/agents`. */
export async function listAgents(base = ""): Promise<AgentInfo[]> {
  return (await call<{ agents: AgentInfo[] }>("GET", "/agents", undefined, base)).agents;
}

/** `GET /api/agents/check?name=`. */
export function checkAgentName(name: string, base = ""): Promise<{ available: boolean; name: string }> {
  return call("GET", `/agents/check?name=${encodeURIComponent(name)}`, undefined, base);
}

/** `POST /api/agents`. */
export function createAgent(draft: AgentDraft & { name: string }, base = ""): Promise<AgentInfo> {
  return call("POST", "/agents", draft, base);
}

/** `PUT /api/agents/{name}`. */
export function updateAgent(name: string, draft: AgentDraft, base = ""): Promise<AgentInfo> {
  return call("PUT", `/agents/${encodeURIComponent(name)}`, draft, base);
}

/** `DELETE /api/agents/{name}`. */
export function deleteAgent(name: string, base = ""): Promise<void> {
  return call("DELETE", `/agents/${encodeURIComponent(name)}`, undefined, base);
}
