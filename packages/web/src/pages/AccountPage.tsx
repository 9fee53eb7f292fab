import { useState } from "react";
import type { FormEvent } from "react";
import { ApiError } from "../api/http";
import { changePassword } from "../auth/api";
import { newPasswordProblem } from "../auth/messages";
import { isAdmin, signOut, useSession } from "../auth/session";
import { ErrorBanner } from "../components/ErrorBanner";
import { TokensPanel } from "../components/TokensPanel";

/** Change the password (`POST /api/v1/auth/change-password`). Other sessions end; this one is re-issued. */
function PasswordForm() {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    const problem = newPasswordProblem(password, confirm);
    if (problem) return setError(problem);
    setBusy(true);
    try {
      await changePassword({ current_password: current, new_password: password });
      setCurrent("");
      setPassword("");
      setConfirm("");
      setError(undefined);
      setDone(true);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="account-section" aria-label="Change password">
      <h2>Password</h2>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      {done && (
        <p role="status" data-testid="password-changed">
          Password changed. Your other sessions and browsers are signed out.
        </p>
      )}
      <form className="agent-form" onSubmit={(e) => void submit(e)} aria-label="Change password">
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input type="password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <label>
          Confirm new password
          <input type="password" autoComplete="new-password" required value={confirm} onChange={(e) => setConfirm(e.target.value)} />
        </label>
        <div>
          <button type="submit" disabled={busy}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}

/** `#/account`: who is signed in, the password, personal access tokens and signing out. */
export function AccountPage({ onClose }: { onClose(): void }) {
  const session = useSession();
  const [error, setError] = useState<string | undefined>();
  const user = session?.user;
  return (
    <main className="skills-page account-page" aria-label="Account settings">
      <div className="topbar">
        <h1 className="skills-title">Account settings</h1>
        <span className="spacer" />
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <div className="skills-body">
        {user && (
          <section className="account-section" aria-label="Account">
            <h2>Account</h2>
            <p>
              Signed in as <strong data-testid="account-email">{user.email}</strong> <span className="chip">{user.system_role}</span>
              {user.oauth_provider && <span className="chip">via {user.oauth_provider}</span>}
            </p>
            <div>
              <button type="button" onClick={() => void signOut().catch((err) => setError(`Sign-out failed: ${(err as Error).message}`))}>
                Sign out
              </button>
            </div>
          </section>
        )}
        {user && !user.oauth_provider && <PasswordForm />}
        {user?.oauth_provider && <p className="muted">This account signs in with {user.oauth_provider}: its password is managed there.</p>}
        <TokensPanel admin={isAdmin(session)} />
      </div>
    </main>
  );
}
