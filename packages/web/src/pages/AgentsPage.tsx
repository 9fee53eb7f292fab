import { useCallback, useEffect, useState } from "react";
import { agentsApiEnabled, createAgent, deleteAgent, listAgents, updateAgent } from "../api/agents";
import type { AgentInfo } from "../api/agents";
import type { ModelInfo } from "../api/rest";
import { ErrorBanner } from "../components/ErrorBanner";

/** Props of {@link AgentsPage}. */
export interface AgentsPageProps {
  models: ModelInfo[];
  /** Start a new chat with this agent (`context.agent_name`). */
  onChat(agentName: string): void;
  /** Leave the page. */
  onClose(): void;
}

interface Draft {
  name: string;
  description: string;
  model: string;
  toolGroups: string;
  soul: string;
}

const EMPTY: Draft = { name: "", description: "", model: "", toolGroups: "", soul: "" };
const NAME_RE = /^[A-Za-z0-9-]+$/;

function toDraft(a: AgentInfo): Draft {
  return { name: a.name, description: a.description, model: a.model ?? "", toolGroups: (a.tool_groups ?? []).join(", "), soul: a.soul ?? "" };
}

/** Custom agents: list, create, edit, delete, and start a chat with one. */
export function AgentsPage({ models, onChat, onClose }: AgentsPageProps) {
  const [enabled, setEnabled] = useState<boolean | undefined>();
  const [agents, setAgents] = useState<AgentInfo[]>([]);
  const [editing, setEditing] = useState<string | null | undefined>(undefined); // undefined: no form; null: new
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const refresh = useCallback(async () => {
    try {
      const on = await agentsApiEnabled();
      setEnabled(on);
      if (on) setAgents(await listAgents());
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const save = async () => {
    if (editing === null && !NAME_RE.test(draft.name)) {
      setError("Names use letters, digits and '-' only.");
      return;
    }
    const groups = draft.toolGroups.split(",").map((s) => s.trim()).filter(Boolean);
    const body = { description: draft.description, model: draft.model || null, tool_groups: groups.length ? groups : null, soul: draft.soul };
    setBusy(true);
    try {
      if (editing === null) await createAgent({ name: draft.name, ...body });
      else if (editing) await updateAgent(editing, body);
      setEditing(undefined);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (name: string) => {
    if (!window.confirm(`Delete agent "${name}"? Its soul and memory are removed.`)) return;
    try {
      await deleteAgent(name);
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main className="agents-page" aria-label="Agents">
      <div className="topbar">
        <h1 className="agents-title">Agents</h1>
        <span className="spacer" />
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      {enabled === false && (
        // One sentence, one fix: the gateway reads agents_api from config.yaml on every request, so a reload is enough.
        <p className="agents-disabled muted" data-testid="agents-disabled">
          Custom agents are off on this server: set <code>agents_api.enabled: true</code> in config.yaml, then reload this page.
        </p>
      )}
      {enabled && (
        <div className="agents-body">
          <div className="agents-actions">
            <button
              type="button"
              className="new-chat"
              onClick={() => {
                setEditing(null);
                setDraft(EMPTY);
              }}
            >
              New agent
            </button>
          </div>
          {agents.length === 0 && editing === undefined && <p className="muted">No custom agents yet.</p>}
          <ul className="agent-list">
            {agents.map((a) => (
              <li key={a.name} className="agent-card" data-agent={a.name}>
                <div className="agent-head">
                  <strong className="agent-name">{a.name}</strong>
                  {a.model && <span className="chip">{a.model}</span>}
                  {(a.tool_groups ?? []).map((g) => (
                    <span key={g} className="chip">
                      {g}
                    </span>
                  ))}
                </div>
                <div className="agent-description muted">{a.description || "No description"}</div>
                <div className="agent-buttons">
                  <button type="button" onClick={() => onChat(a.name)}>
                    Chat
                  </button>
                  <button
                    type="button"
                    onClick={() => {
                      setEditing(a.name);
                      setDraft(toDraft(a));
                    }}
                  >
                    Edit
                  </button>
                  <button type="button" onClick={() => void remove(a.name)}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
          {editing !== undefined && (
            <form
              className="agent-form"
              aria-label={editing === null ? "New agent" : `Edit ${editing}`}
              onSubmit={(e) => {
                e.preventDefault();
                void save();
              }}
            >
              <label>
                Name
                <input value={draft.name} disabled={editing !== null} onChange={(e) => setDraft({ ...draft, name: e.target.value })} required />
              </label>
              <label>
                Description
                <input value={draft.description} onChange={(e) => setDraft({ ...draft, description: e.target.value })} />
              </label>
              <label>
                Model
                <select value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })}>
                  <option value="">Default model</option>
                  {models.map((m) => (
                    <option key={m.name} value={m.name}>
                      {m.display_name || m.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Tool groups (comma separated, empty = all)
                <input value={draft.toolGroups} onChange={(e) => setDraft({ ...draft, toolGroups: e.target.value })} />
              </label>
              <label>
                Soul (SOUL.md)
                <textarea rows={8} value={draft.soul} onChange={(e) => setDraft({ ...draft, soul: e.target.value })} />
              </label>
              <div className="agent-buttons">
                <button type="submit" className="new-chat" disabled={busy}>
                  {editing === null ? "Create" : "Save"}
                </button>
                <button type="button" onClick={() => setEditing(undefined)}>
                  Cancel
                </button>
              </div>
            </form>
          )}
        </div>
      )}
    </main>
  );
}
