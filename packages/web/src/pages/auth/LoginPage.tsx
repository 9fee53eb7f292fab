import { useEffect, useState } from "react";
import type { FormEvent } from "react";
import { fetchMe, fetchProviders, fetchSetupStatus, loginLocal, oauthStartUrl } from "../../auth/api";
import { isAuthDisabledUser } from "../../auth/session";
import type { AuthProvider } from "../../auth/api";
import { loginErrorText, ssoErrorText } from "../../auth/messages";
import { authPageUrl, resolveNextPath } from "../../auth/next-path";
import { AuthLayout, FormError } from "./AuthLayout";
import { loadRemembered, saveRemembered } from "./remember";

/**
 * `/login`: email, password and "remember me" (`POST /api/v1/auth/login/local`), plus one button per
 * SSO provider. Afterwards the browser goes to the validated `next` (this site's paths only).
 */
export function LoginPage() {
  const params = new URLSearchParams(location.search);
  const next = resolveNextPath(params.get("next"), location.origin);
  const remembered = loadRemembered();
  const [email, setEmail] = useState(remembered.email);
  const [password, setPassword] = useState("");
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
        if (live && s.needs_setup) location.replace(authPageUrl("/setup", next, location.origin));
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
    setBusy(true);
    setError(undefined);
    try {
      const res = await loginLocal(email.trim(), password, rememberMe);
      saveRemembered(email.trim(), rememberMe);
      location.assign(res.needs_setup ? authPageUrl("/setup", next, location.origin) : next);
    } catch (err) {
      setError(loginErrorText(err));
      setPassword("");
      setBusy(false);
    }
  };

  return (
    <AuthLayout title="Sign in">
      <form className="auth-form" onChange={() => setError(undefined)} onSubmit={(e) => void submit(e)} aria-label="Sign in">
        <label>
          Email
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus={!email} />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} autoFocus={!!email} />
        </label>
        <label className="toggle">
          <input type="checkbox" checked={rememberMe} onChange={(e) => setRememberMe(e.target.checked)} />
          Remember me
        </label>
        <FormError text={error} />
        <button type="submit" className="auth-submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
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
