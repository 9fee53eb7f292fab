import { useEffect, useState } from "react";
import type { FormEvent } from "react";
import { ApiError } from "../../api/http";
import { changePassword, fetchMe, fetchSetupStatus, initializeAdmin } from "../../auth/api";
import { newPasswordProblem } from "../../auth/messages";
import { resolveNextPath } from "../../auth/next-path";
import { AuthLayout, ConfirmPasswordField, FormError, RememberMeToggle } from "./AuthLayout";
import { loadRemembered } from "./remember";

type Mode = "loading" | "init" | "finish" | "unavailable";

/**
 * `/setup`, two cases. No admin exists yet (`setup-status` says `needs_setup`): create the first
 * admin (`POST /api/v1/auth/initialize`, which signs them in). Or a signed-in account still marked
 * `needs_setup` (created with a temporary password): set its email and a new password
 * (`POST /api/v1/auth/change-password` with `new_email`).
 */
export function SetupPage() {
  const next = resolveNextPath(new URLSearchParams(location.search).get("next"), location.origin);
  const [mode, setMode] = useState<Mode>("loading");
  const [attempt, setAttempt] = useState(0);
  const [email, setEmail] = useState("");
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [rememberMe, setRememberMe] = useState(() => loadRemembered().rememberMe);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const status = await fetchSetupStatus();
        if (!live) return;
        if (status.needs_setup) return setMode("init");
        try {
          const me = await fetchMe();
          if (!live) return;
          if (me.needs_setup) {
            setEmail(me.email);
            return setMode("finish");
          }
          location.replace(next);
        } catch (err) {
          if (err instanceof ApiError && err.status === 401) location.replace("/login");
          else if (live) setMode("unavailable");
        }
      } catch {
        if (live) setMode("unavailable");
      }
    })();
    return () => {
      live = false;
    };
  }, [next, attempt]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = newPasswordProblem(password, confirm);
    if (problem) return setError(problem);
    setBusy(true);
    setError(undefined);
    try {
      if (mode === "init") await initializeAdmin(email.trim(), password, rememberMe);
      else await changePassword({ current_password: current, new_password: password, new_email: email.trim(), remember_me: rememberMe });
      location.assign(next);
    } catch (err) {
      // Somebody else finished the setup meanwhile: this browser signs in like everyone else.
      if (err instanceof ApiError && err.status === 409) return location.replace("/login");
      setError(err instanceof ApiError ? err.message : `The server could not be reached: ${(err as Error).message}`);
      setBusy(false);
    }
  };

  if (mode === "loading") return <AuthLayout title="DeerFlow"><p className="muted">Checking the server…</p></AuthLayout>;
  if (mode === "unavailable")
    return (
      <AuthLayout title="Server unavailable" subtitle="The setup status could not be read.">
        <button type="button" onClick={() => setAttempt((a) => a + 1)}>
          Retry
        </button>
      </AuthLayout>
    );
  const init = mode === "init";
  return (
    <AuthLayout
      title={init ? "Create the administrator" : "Finish your account"}
      subtitle={init ? "This server has no administrator yet. The account you create here manages users, MCP servers and skills." : "Choose your email and a new password."}
    >
      <form className="auth-form" onChange={() => setError(undefined)} onSubmit={(e) => void submit(e)} aria-label={init ? "Create the administrator" : "Finish your account"}>
        <label>
          Email
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </label>
        {!init && (
          <label>
            Current password
            <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
          </label>
        )}
        <label>
          {init ? "Password" : "New password"}
          <input type="password" name="new-password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ConfirmPasswordField value={confirm} onChange={setConfirm} />
        <RememberMeToggle checked={rememberMe} onChange={setRememberMe} />
        <FormError text={error} />
        <button type="submit" className="auth-submit" disabled={busy}>
          {init ? "Create administrator" : "Save and continue"}
        </button>
      </form>
    </AuthLayout>
  );
}
