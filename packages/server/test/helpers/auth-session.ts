import { resolveAuthSettings } from "../../src/auth";
import type { AuthSection, AuthSettings, UserStore } from "../../src/auth";
import { startTestGateway } from "./test-gateway";
import type { TestGateway, TestGatewayOptions } from "./test-gateway";

/** A session secret for test gateways (≥ 32 characters). */
export const TEST_JWT_SECRET = "auth-tests-jwt-secret-0123456789abcdef0123";

/** Passwords that pass the strength rule. */
export const ADMIN_PASSWORD = "correct-horse-battery";
export const USER_PASSWORD = "another-long-passphrase";

/**
 * Sign-in on, resolved without the process environment, so a
 * `DEER_FLOW_AUTH_DISABLED=1` in the shell running the tests cannot turn
 * these into auth-disabled tests.
 */
export function authEnabled(extra: Partial<AuthSection> = {}): AuthSettings {
  return resolveAuthSettings({ enabled: true, jwt_secret: TEST_JWT_SECRET, ...extra }, {});
}

/** A clock tests move by hand (sessions, lockouts). */
export class TestClock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** A test gateway with sign-in on. */
export interface AuthGateway extends TestGateway {
  /** `${url}/api`. */
  api: string;
  clock: TestClock;
  /** The gateway's account store. */
  users: UserStore;
}

/** Options of {@link startAuthGateway}. */
export interface AuthGatewayOptions extends TestGatewayOptions {
  /** Extra `auth:` keys (`registration_enabled`, `session_days`, `oidc`). */
  authSection?: Partial<AuthSection>;
  clock?: TestClock;
}

/** Start a ScriptedModel gateway (see `startTestGateway`) with sign-in enabled and a hand-moved clock. */
export async function startAuthGateway(opts: AuthGatewayOptions = {}): Promise<AuthGateway> {
  const clock = opts.clock ?? new TestClock();
  const { authSection, ...rest } = opts;
  const t = await startTestGateway({ auth: authEnabled(authSection), authClock: clock.now, ...rest });
  // these gateways keep their accounts in auth.db (SQLite), whose store answers synchronously
  return { ...t, api: `${t.url}/api`, clock, users: t.gateway.auth.users() as UserStore };
}

/** The cookies of one browser. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  /** Keep what a response sets (an empty value or `Max-Age=0` clears a cookie). */
  absorb(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === "" || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** The `Cookie` header. */
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/** A signed-in browser: cookies, plus `X-CSRF-Token` on every state-changing request. */
export class SignedIn {
  constructor(
    readonly api: string,
    readonly jar = new CookieJar(),
  ) {}

  /** The CSRF header value (the `csrf_token` cookie). */
  get csrf(): string | undefined {
    return this.jar.get("csrf_token");
  }

  /** Headers of a request of `method` (cookies; CSRF on writes). */
  headers(method: string, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.jar.cookies.size) h.cookie = this.jar.header();
    if (this.csrf && !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())) h["x-csrf-token"] = this.csrf;
    return h;
  }

  /** A request under `/api` (`path` starts with `/`); JSON body when given. Keeps the cookies it sets. */
  async send(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
    const headers = this.headers(method, body === undefined ? extra : { "content-type": "application/json", ...extra });
    const res = await fetch(`${this.api}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    this.jar.absorb(res);
    return res;
  }

  /** `send`, expecting `status`; the parsed JSON body. */
  async json<T = any>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
    const res = await this.send(method, path, body);
    const text = await res.text();
    if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

/** POST DeerFlow's login form; the raw answer. */
export function postLogin(api: string, email: string, password: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api}/v1/auth/login/local`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ username: email, password, ...extra }).toString(),
  });
}

/** Sign in with email and password; fails unless the login answers 200. */
export async function signIn(api: string, email: string, password: string, opts: { rememberMe?: boolean } = {}): Promise<SignedIn> {
  const res = await postLogin(api, email, password, opts.rememberMe === undefined ? {} : { remember_me: String(opts.rememberMe) });
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
  const s = new SignedIn(api);
  s.jar.absorb(res);
  return s;
}

/** Create the first admin through `initialize` (signed in). */
export async function initializeAdmin(api: string, email = "admin@example.com", password = ADMIN_PASSWORD): Promise<SignedIn> {
  const s = new SignedIn(api);
  await s.json("POST", "/v1/auth/initialize", { email, password }, 201);
  return s;
}

/** An admin creates a `user` account; then that user signs in. */
export async function addUser(admin: SignedIn, email: string, password = USER_PASSWORD, role: "user" | "admin" = "user"): Promise<SignedIn> {
  await admin.json("POST", "/v1/auth/users", { email, password, system_role: role }, 201);
  return signIn(admin.api, email, password);
}
