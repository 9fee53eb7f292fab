import { useCallback, useEffect, useState } from "react";
import { fetchMcpConfig, fetchMcpStatus, setMcpServerEnabled } from "../api/mcp";
import type { McpServerConfig, McpServerStatus } from "../api/mcp";
import { ErrorBanner } from "../components/ErrorBanner";

/** Props of {@link McpPage}. */
export interface McpPageProps {
  /** Leave the page. */
  onClose(): void;
}

interface Row {
  name: string;
  config: McpServerConfig;
  status?: McpServerStatus;
}

const STATE_LABEL: Record<McpServerStatus["state"], string> = { connected: "Connected", connecting: "Connecting…", failed: "Unavailable", disabled: "Disabled" };

function target(c: McpServerConfig): string {
  if (c.type === "stdio") return [c.command ?? "", ...(c.args ?? [])].join(" ").trim();
  return c.url ?? "";
}

/** MCP servers: each server's transport, status (connected, tools, last error) and an enable/disable toggle. */
export function McpPage({ onClose }: McpPageProps) {
  const [rows, setRows] = useState<Row[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState<string | undefined>();

  const refresh = useCallback(async (wait = false) => {
    try {
      const [config, status] = await Promise.all([fetchMcpConfig(), fetchMcpStatus(wait)]);
      const byName = new Map(status.map((s) => [s.name, s]));
      setRows(Object.entries(config).map(([name, c]) => ({ name, config: c, status: byName.get(name) })));
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    void refresh(true);
  }, [refresh]);

  // While a server is still starting, look again shortly (the gateway bounds every start).
  const loading = rows?.some((r) => r.config.enabled && (!r.status || r.status.state === "connecting"));
  useEffect(() => {
    if (!loading) return;
    const t = setTimeout(() => void refresh(true), 1000);
    return () => clearTimeout(t);
  }, [loading, refresh]);

  const toggle = async (r: Row) => {
    const enabled = !r.config.enabled;
    setBusy(r.name);
    // Shown at once; the status that follows comes from the gateway (and a refused change is rolled back).
    setRows((rs) => rs?.map((x) => (x.name === r.name ? { ...x, config: { ...x.config, enabled }, status: undefined } : x)));
    try {
      await setMcpServerEnabled(r.name, enabled);
    } catch (err) {
      setError((err as Error).message);
    }
    try {
      await refresh(true);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <main className="skills-page mcp-page" aria-label="MCP servers">
      <div className="topbar">
        <h1 className="skills-title">MCP servers</h1>
        <span className="spacer" />
        <button type="button" onClick={() => void refresh(true)}>
          Refresh
        </button>
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <div className="skills-body">
        <p className="muted">
          Servers from <code>extensions_config.json</code>. Their tools are offered to the agent as <code>server_tool</code>; a server that fails to start is
          retried in the background and its tools return when it recovers.
        </p>
        {rows && rows.length === 0 && <p className="muted">No MCP servers configured.</p>}
        <ul className="skill-list">
          {(rows ?? []).map((r) => {
            const state = r.status?.state ?? (r.config.enabled ? "connecting" : "disabled");
            return (
              <li className={`skill-card${r.config.enabled ? "" : " disabled"}`} key={r.name} data-testid="mcp-server" data-server={r.name} data-state={state}>
                <div className="skill-head">
                  <strong>{r.name}</strong>
                  <span className="chip">{r.config.type}</span>
                  <span className="chip" data-testid="mcp-state">
                    {STATE_LABEL[state]}
                  </span>
                  <span className="spacer" />
                  <label className="toggle">
                    <input type="checkbox" aria-label={`Enable ${r.name}`} checked={r.config.enabled} disabled={busy === r.name} onChange={() => void toggle(r)} />
                    {r.config.enabled ? "Enabled" : "Disabled"}
                  </label>
                </div>
                {r.config.description && <p className="muted">{r.config.description}</p>}
                <code className="muted">{target(r.config)}</code>
                {r.status?.last_error && (
                  <p className="muted" role="status" data-testid="mcp-error">
                    Last error: {r.status.last_error}
                    {r.status.next_retry_at ? ` (retrying ${new Date(r.status.next_retry_at).toLocaleTimeString()})` : ""}
                  </p>
                )}
                {r.status && r.status.tools.length > 0 && (
                  <div className="chips" aria-label={`Tools of ${r.name}`}>
                    {r.status.tools.map((t) => (
                      <span className="chip" key={t}>
                        {t}
                      </span>
                    ))}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      </div>
    </main>
  );
}
