import { useEffect, useState } from "react";
import type { FormEvent } from "react";
import { ApiError } from "../../api/http";
import { fetchMe, fetchProviders, fetchSetupStatus, loginLocal, oauthStartUrl, registerAccount } from "../../auth/api";
import type { AuthProvider } from "../../auth/api";
import { loginErrorText, newPasswordProblem, ssoErrorText } from "../../auth/messages";
import { authPageUrl, resolveNextPath } from "../../auth/next-path";
import { isAuthDisabledUser } from "../../auth/session";
import { AuthLayout, ConfirmPasswordField, FormError, RememberMeToggle } from "./AuthLayout";
import { loadRemembered, saveRemembered } from "./remember";

/**
 * `/login`: email, password and "remember me" (`POST /api/v1/auth/login/local`), one button per SSO
 * provider, and — only when the server allows self-registration — "Create an account"
 * (`POST /api/v1/auth/register`). Afterwards the browser goes to the validated `next` (this site's
 * paths only).
 */
export function LoginPage() {
  const params = new URLSearchParams(location.search);
  const next = resolveNextPath(params.get("next"), location.origin);
  const remembered = loadRemembered();
  const [registering, setRegistering] = useState(false);
  const [registrationEnabled, setRegistrationEnabled] = useState(false);
  const [email, setEmail] = useState(remembered.email);
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [rememberMe, setRememberMe] = useState(remembered.rememberMe);
  const [error, setError] = useState<string | undefined>(() => ssoErrorText(params.get("error")));
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<AuthProvider[]>([]);

  useEffect(() => {
    let live = true;
    // Already signed in (or sign-in is off: auth-disabled mode's default admin): nothing to do here.
    fetchMe().then(
      (me) => {
        if (live) location.replace(me.needs_setup && !isAuthDisabledUser(me) ? authPageUrl("/setup", next, location.origin) : next);
      },
      () => {},
    );
    // Before the first admin exists there is nobody to sign in as: first-run setup instead.
    fetchSetupStatus().then(
      (s) => {
        if (!live) return;
        if (s.needs_setup) location.replace(authPageUrl("/setup", next, location.origin));
        setRegistrationEnabled(s.registration_enabled === true);
      },
      () => {},
    );
    fetchProviders().then(
      (p) => live && setProviders(p),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [next]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (registering) {
      const problem = newPasswordProblem(password, confirm);
      if (problem) return setError(problem);
    }
    setBusy(true);
    setError(undefined);
    try {
      let needsSetup = false;
      if (registering) await registerAccount(email.trim(), password, rememberMe);
      else needsSetup = (await loginLocal(email.trim(), password, rememberMe)).needs_setup;
      saveRemembered(email.trim(), rememberMe);
      location.assign(needsSetup ? authPageUrl("/setup", next, location.origin) : next);
    } catch (err) {
      // A refused registration (taken email, weak password, registration off) says why in the gateway's words.
      setError(registering && err instanceof ApiError ? err.message : loginErrorText(err));
      setPassword("");
      setConfirm("");
      setBusy(false);
    }
  };

  const title = registering ? "Create an account" : "Sign in";
  return (
    <AuthLayout title={title}>
      <form className="auth-form" onChange={() => setError(undefined)} onSubmit={(e) => void submit(e)} aria-label={title}>
        <label>
          Email
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus={!email} />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete={registering ? "new-password" : "current-password"}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoFocus={!!email}
          />
        </label>
        {registering && <ConfirmPasswordField value={confirm} onChange={setConfirm} />}
        <RememberMeToggle checked={rememberMe} onChange={setRememberMe} />
        <FormError text={error} />
        <button type="submit" className="auth-submit" disabled={busy}>
          {registering ? (busy ? "Creating…" : "Create account") : busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {registrationEnabled && (
        <button
          type="button"
          className="auth-switch"
          onClick={() => {
            setRegistering((r) => !r);
            setError(undefined);
          }}
        >
          {registering ? "Have an account? Sign in" : "No account? Create one"}
        </button>
      )}
      {providers.length > 0 && (
        <div className="auth-sso" aria-label="Single sign-on">
          <div className="auth-divider muted">or</div>
          {providers.map((p) => (
            <a key={p.id} className="auth-sso-button" href={oauthStartUrl(p.id, next)} data-testid="sso-button">
              Continue with {p.display_name || p.id}
            </a>
          ))}
        </div>
      )}
    </AuthLayout>
  );
}
