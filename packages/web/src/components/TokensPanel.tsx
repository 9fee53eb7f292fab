import { useCallback, useState } from "react";
import type { FormEvent } from "react";
import { createToken, listTokens, revokeToken, TOKEN_SCOPES } from "../auth/api";
import type { CreatedToken, TokenScope } from "../auth/api";
import { ErrorBanner } from "./ErrorBanner";
import { formatTime } from "./format-time";
import { useRemote } from "./use-remote";

const SCOPE_HINT: Record<TokenScope, string> = {
  read: "read threads, runs and files",
  run: "read, plus create threads and start, join and cancel runs",
  admin: "admin-only routes (MCP, skills, users)",
};

/** Copy `text`; falls back to a selected hidden textarea where the Clipboard API is not offered. */
async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    if (!ok) throw new Error("Copying is not available in this browser: select the token and copy it by hand.");
  }
}

/**
 * Personal access tokens (`Authorization: Bearer …` for scripts and the SDK): create with a name
 * and scopes, see the secret once, list, revoke. The `admin` scope is offered to admins only.
 */
export function TokensPanel({ admin }: { admin: boolean }) {
  const tokens = useRemote(useCallback(() => listTokens(), []));
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<TokenScope[]>(["read"]);
  const [created, setCreated] = useState<CreatedToken | undefined>();
  const [copied, setCopied] = useState(false);
  const [busy, setBusy] = useState(false);
  const offered = TOKEN_SCOPES.filter((s) => s !== "admin" || admin);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!scopes.length) return tokens.setError("Choose at least one scope.");
    setBusy(true);
    await tokens.run(async () => {
      setCreated(await createToken(name.trim(), scopes));
      setCopied(false);
      setName("");
    });
    setBusy(false);
  };

  const revoke = async (id: string, label: string) => {
    if (!confirm(`Revoke the token "${label}"? Scripts using it stop working at once.`)) return;
    try {
      await revokeToken(id);
      if (created?.id === id) setCreated(undefined);
      await tokens.refresh();
    } catch (err) {
      tokens.setError((err as Error).message);
    }
  };

  return (
    <section className="account-section" aria-label="Personal access tokens">
      <h2>Personal access tokens</h2>
      <p className="muted">
        For scripts and the LangGraph SDK: send <code>Authorization: Bearer &lt;token&gt;</code>. A token acts as you, limited to its scopes.
      </p>
      <ErrorBanner error={tokens.error} onDismiss={() => tokens.setError(undefined)} />
      {created && (
        <div className="token-secret" role="status" data-testid="token-secret-box">
          <p>
            <strong>Copy the token “{created.name}” now.</strong> It is shown only once.
          </p>
          <div className="token-secret-row">
            <code data-testid="token-secret">{created.token}</code>
            <button
              type="button"
              onClick={() =>
                void copyText(created.token).then(
                  () => setCopied(true),
                  (err) => tokens.setError((err as Error).message),
                )
              }
            >
              {copied ? "Copied" : "Copy"}
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <form className="agent-form" onSubmit={(e) => void create(e)} aria-label="Create a token">
        <label>
          Name
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. nightly report script" />
        </label>
        <fieldset className="token-scopes">
          <legend>Scopes</legend>
          {offered.map((s) => (
            <label key={s} className="toggle">
              <input type="checkbox" aria-label={`Scope ${s}`} checked={scopes.includes(s)} onChange={(e) => setScopes((cur) => (e.target.checked ? [...cur, s] : cur.filter((x) => x !== s)))} />
              <code>{s}</code> <span className="muted">{SCOPE_HINT[s]}</span>
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" disabled={busy || !name.trim()}>
            Create token
          </button>
        </div>
      </form>
      {tokens.value && tokens.value.length === 0 && <p className="muted">No tokens yet.</p>}
      {tokens.value && tokens.value.length > 0 && (
        <div className="table-wrap">
          <table className="account-table" aria-label="Your tokens">
            <thead>
              <tr>
                <th>Name</th>
                <th>Scopes</th>
                <th>Created</th>
                <th>Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.value.map((t) => (
                <tr key={t.id} data-testid="token-row" data-token-name={t.name}>
                  <td>{t.name}</td>
                  <td>{t.scopes.join(", ")}</td>
                  <td>{formatTime(t.created_at)}</td>
                  <td>{formatTime(t.last_used_at) || "never"}</td>
                  <td>
                    <button type="button" aria-label={`Revoke ${t.name}`} onClick={() => void revoke(t.id, t.name)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
