/** The auth API under `/api/v1/auth/` (DeerFlow's routes and shapes, plus tokens and users). */
import { apiFetch, failure, jsonRequest } from "../api/http";

/** `GET /api/v1/auth/me`. */
export interface AuthUser {
  id: string;
  email: string;
  system_role: "admin" | "user";
  needs_setup: boolean;
  oauth_provider: string | null;
}

/** `GET /api/v1/auth/setup-status`. */
export interface SetupStatus {
  needs_setup: boolean;
  registration_enabled: boolean;
}

/** One SSO provider of `GET /api/v1/auth/providers`. */
export interface AuthProvider {
  id: string;
  display_name: string;
  type?: string;
}

/** What a personal access token may do. */
export type TokenScope = "read" | "run" | "admin";
/** The scopes in the order the UI offers them. */
export const TOKEN_SCOPES: readonly TokenScope[] = ["read", "run", "admin"];

/** A personal access token as listed (never with its secret). */
export interface AccessToken {
  id: string;
  name: string;
  scopes: TokenScope[];
  created_at: string | number;
  last_used_at?: string | number | null;
  expires_at?: string | number | null;
}

/** The answer of creating a token: the only time the secret is shown. */
export interface CreatedToken extends AccessToken {
  token: string;
}

/** A row of the users list (admin only). */
export interface ListedUser {
  id: string;
  email: string;
  system_role: "admin" | "user";
  needs_setup?: boolean;
  oauth_provider?: string | null;
  created_at?: string | number;
}

const AUTH = "/v1/auth";

/** A list answered either bare or wrapped as `{[key]: [...]}`. */
function listOf<T>(body: unknown, key: string): T[] {
  if (Array.isArray(body)) return body as T[];
  const inner = (body as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(inner) ? (inner as T[]) : [];
}

/** `GET me`; a 401 comes back as an error (the start-up probe decides where to go). */
export const fetchMe = (base = "") => jsonRequest<AuthUser>("GET", `${AUTH}/me`, undefined, base, { allowUnauthorized: true });

/** `GET setup-status`. */
export const fetchSetupStatus = (base = "") => jsonRequest<SetupStatus>("GET", `${AUTH}/setup-status`, undefined, base, { allowUnauthorized: true });

/** `GET providers` (SSO buttons of the login page). */
export async function fetchProviders(base = ""): Promise<AuthProvider[]> {
  return listOf<AuthProvider>(await jsonRequest("GET", `${AUTH}/providers`, undefined, base, { allowUnauthorized: true }), "providers");
}

/** The SSO start URL of a provider, bringing the user back to `next`. */
export function oauthStartUrl(providerId: string, next: string, base = ""): string {
  return `${base}/api${AUTH}/oauth/${encodeURIComponent(providerId)}?next=${encodeURIComponent(next)}`;
}

/** `POST login/local` (form-encoded, as DeerFlow's OAuth2 password form); a wrong password is an {@link ApiError} 401. */
export async function loginLocal(email: string, password: string, rememberMe: boolean, base = ""): Promise<{ expires_in: number; needs_setup: boolean }> {
  const body = new URLSearchParams({ username: email, password, remember_me: rememberMe ? "true" : "false" });
  const res = await apiFetch(`${base}/api${AUTH}/login/local`, { method: "POST", body }, { allowUnauthorized: true });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as { expires_in: number; needs_setup: boolean };
}

/** `POST initialize`: the first admin, signed in at once (409 once an admin exists). */
export const initializeAdmin = (email: string, password: string, rememberMe: boolean, base = "") =>
  jsonRequest<AuthUser>("POST", `${AUTH}/initialize`, { email, password, remember_me: rememberMe }, base, { allowUnauthorized: true });

/** `POST register`: a `user` account, signed in at once (403 `registration_disabled` unless the server allows it). */
export const registerAccount = (email: string, password: string, rememberMe: boolean, base = "") =>
  jsonRequest<AuthUser>("POST", `${AUTH}/register`, { email, password, remember_me: rememberMe }, base, { allowUnauthorized: true });

/** `POST logout` (clears the session cookies). */
export const logout = (base = "") => jsonRequest<unknown>("POST", `${AUTH}/logout`, undefined, base, { allowUnauthorized: true });

/** `POST change-password` (`new_email` also finishes the setup of an account created with `needs_setup`). */
export const changePassword = (body: { current_password: string; new_password: string; new_email?: string; remember_me?: boolean }, base = "") =>
  jsonRequest<{ message?: string }>("POST", `${AUTH}/change-password`, body, base);

/** `GET tokens`. */
export async function listTokens(base = ""): Promise<AccessToken[]> {
  return listOf<AccessToken>(await jsonRequest("GET", `${AUTH}/tokens`, undefined, base), "tokens");
}

/** `POST tokens {name, scopes}`. */
export const createToken = (name: string, scopes: TokenScope[], base = "") => jsonRequest<CreatedToken>("POST", `${AUTH}/tokens`, { name, scopes }, base);

/** `DELETE tokens/{id}`. */
export const revokeToken = (id: string, base = "") => jsonRequest<unknown>("DELETE", `${AUTH}/tokens/${encodeURIComponent(id)}`, undefined, base);

/** `GET users` (admin). */
export async function listUsers(base = ""): Promise<ListedUser[]> {
  return listOf<ListedUser>(await jsonRequest("GET", `${AUTH}/users`, undefined, base), "users");
}

/** `POST users {email, password, system_role}` (admin). */
export const createUser = (body: { email: string; password: string; system_role: "admin" | "user" }, base = "") => jsonRequest<ListedUser>("POST", `${AUTH}/users`, body, base);

/** `PATCH users/{id} {system_role}` (admin; the last admin cannot be demoted). */
export const setUserRole = (id: string, role: "admin" | "user", base = "") => jsonRequest<ListedUser>("PATCH", `${AUTH}/users/${encodeURIComponent(id)}`, { system_role: role }, base);

/** `DELETE users/{id}` (admin; the last admin cannot be deleted). */
export const deleteUser = (id: string, base = "") => jsonRequest<unknown>("DELETE", `${AUTH}/users/${encodeURIComponent(id)}`, undefined, base);
