/** Who is signed in, how the app decides that at start-up, and signing out. */
import { createContext, useContext } from "react";
import { ApiError, setUnauthorizedHandler } from "../api/http";
import { fetchMe, fetchSetupStatus, logout } from "./api";
import type { AuthUser, SetupStatus } from "./api";
import { AUTH_PATHS, authPageUrl, pathOf } from "./next-path";

/** The signed-in user, and whether the server runs with sign-in at all. */
export interface Session {
  user: AuthUser;
  /** False in auth-disabled mode: no login, no sign-out, no account settings (the app as it always was). */
  authEnabled: boolean;
}

/**
 * Auth-disabled mode answers `me` with its synthetic admin, `{id}@test.local` (`default` unless
 * the gateway runs as another local user id). A real account's id is a generated UUID, so no
 * signed-in user looks like this.
 */
export function isAuthDisabledUser(user: AuthUser): boolean {
  return user.system_role === "admin" && !user.oauth_provider && user.email === `${user.id}@test.local`;
}

/** Admins see the MCP, Skills and Users pages; a `user` never does. */
export function isAdmin(session: Session | undefined): boolean {
  return session?.user.system_role === "admin";
}

/** What the app does when it opens. */
export type StartDecision = { kind: "app"; session: Session } | { kind: "redirect"; to: string } | { kind: "error"; message: string };

/** The two calls {@link decideStart} makes (injectable for tests). */
export interface StartProbe {
  me(): Promise<AuthUser>;
  setupStatus(): Promise<SetupStatus>;
}

/**
 * Signed in → the app (or `/setup` while the account still has to finish its setup). Not signed
 * in → `/setup` while no admin exists yet, else `/login` keeping `current` as `next`. Anything
 * else (server down, 5xx) is an error the page shows with a retry: without `me` the app cannot
 * know whom it serves.
 */
export async function decideStart(probe: StartProbe, current: string, origin: string): Promise<StartDecision> {
  let user: AuthUser;
  try {
    user = await probe.me();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) return { kind: "error", message: `The server could not be reached: ${(err as Error).message}` };
    let status: SetupStatus | undefined;
    try {
      status = await probe.setupStatus();
    } catch {
      status = undefined; // The login page still works; it says what failed when the user signs in.
    }
    return { kind: "redirect", to: authPageUrl(status?.needs_setup ? "/setup" : "/login", current, origin) };
  }
  const authEnabled = !isAuthDisabledUser(user);
  if (authEnabled && user.needs_setup) return { kind: "redirect", to: authPageUrl("/setup", current, origin) };
  return { kind: "app", session: { user, authEnabled } };
}

/** {@link decideStart} against this gateway. */
export function decideStartHere(): Promise<StartDecision> {
  return decideStart({ me: () => fetchMe(), setupStatus: () => fetchSetupStatus() }, pathOf(location), location.origin);
}

/** The session of the running app (set by the start-up gate). */
export const SessionContext = createContext<Session | undefined>(undefined);

/** The session, or `undefined` outside the gate (pages rendered alone in tests). */
export function useSession(): Session | undefined {
  return useContext(SessionContext);
}

/**
 * Any 401 of the API sends the browser to the login page, keeping where it was as `next`.
 * Once: several calls failing together make one trip, and the auth pages handle 401 themselves.
 */
export function installLoginRedirect(): void {
  let leaving = false;
  setUnauthorizedHandler(() => {
    if (leaving || AUTH_PATHS.some((p) => location.pathname === p)) return;
    leaving = true;
    location.assign(authPageUrl("/login", pathOf(location), location.origin));
  });
}

/**
 * Sign out: the server ends the session and clears its cookies, this tab forgets its run
 * bookkeeping, then the login page. A failed logout throws (the session may still be live, so
 * the UI must say so rather than pretend).
 */
export async function signOut(): Promise<void> {
  await logout();
  try {
    sessionStorage.clear();
  } catch {
    /* storage unavailable: nothing to forget */
  }
  location.assign("/login");
}
