import { useEffect, useState } from "react";
import { decideStartHere, SessionContext } from "../auth/session";
import type { StartDecision } from "../auth/session";
import { resolveNextPath } from "../auth/next-path";
import { LoginPage } from "../pages/auth/LoginPage";
import { SetupPage } from "../pages/auth/SetupPage";
import { AuthLayout } from "../pages/auth/AuthLayout";
import { App } from "./App";

/**
 * Before the workspace renders: who is signed in (`GET /api/v1/auth/me`). In auth-disabled mode
 * that is the default admin and the app opens as it always did; otherwise login or setup.
 */
function SessionGate() {
  const [decision, setDecision] = useState<StartDecision | undefined>();
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    setDecision(undefined);
    void decideStartHere().then((d) => {
      if (!live) return;
      // `replace`: Back must not return to a page that only redirects again.
      if (d.kind === "redirect") location.replace(d.to);
      else setDecision(d);
    });
    return () => {
      live = false;
    };
  }, [attempt]);
  if (!decision) return null;
  if (decision.kind === "error")
    return (
      <AuthLayout title="Server unavailable" subtitle={decision.message}>
        <button type="button" onClick={() => setAttempt((a) => a + 1)}>
          Retry
        </button>
      </AuthLayout>
    );
  if (decision.kind !== "app") return null;
  return (
    <SessionContext.Provider value={decision.session}>
      <App />
    </SessionContext.Provider>
  );
}

/** After SSO the gateway lands here with `next`; only a path of this site is followed. */
function AuthCallback() {
  useEffect(() => location.replace(resolveNextPath(new URLSearchParams(location.search).get("next"), location.origin)), []);
  return null;
}

/** The UI's pages by path: `/login`, `/setup`, `/auth/callback`; everything else is the workspace. */
export function Root() {
  switch (location.pathname) {
    case "/login":
      return <LoginPage />;
    case "/setup":
      return <SetupPage />;
    case "/auth/callback":
      return <AuthCallback />;
    default:
      return <SessionGate />;
  }
}
