import { resolveAuthSettings } from "../../src/auth";
import type { AuthSettings } from "../../src/auth";

/** A session secret for test gateways (≥ 32 characters). */
export const TEST_JWT_SECRET = "isolation-tests-jwt-secret-0123456789abcdef";

/**
 * Sign-in on, resolved without the process environment, so a
 * `DEER_FLOW_AUTH_DISABLED=1` in the shell running the tests cannot turn
 * these tests into auth-disabled ones.
 */
export function authOn(extra: { registration_enabled?: boolean } = {}): AuthSettings {
  return resolveAuthSettings({ enabled: true, jwt_secret: TEST_JWT_SECRET, ...extra }, {});
}

/** One signed-in browser: its cookies, and the CSRF header echoed on every state-changing request. */
export class Session {
  private readonly cookies = new Map<string, string>();

  constructor(readonly api: string) {}

  /** Keep the cookies a response sets (an empty value or `Max-Age=0` clears one). */
  absorb(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const cleared = value === "" || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The headers this session sends with a request of `method`. */
  headers(method: string, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const csrf = this.cookies.get("csrf_token");
    if (csrf && !["GET", "HEAD", "OPTIONS"].includes(method)) h["x-csrf-token"] = csrf;
    return h;
  }

  /** A request under `/api` (`path` starts with `/`); a JSON body when `body` is given. */
  async send(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
    const headers = this.headers(method, body === undefined ? extra : { "content-type": "application/json", ...extra });
    const res = await fetch(`${this.api}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    this.absorb(res);
    return res;
  }

  /** A multipart upload of `files` (name → content) to `path`. */
  async upload(path: string, files: Record<string, string | Uint8Array>): Promise<Response> {
    const form = new FormData();
    for (const [name, content] of Object.entries(files)) form.append("files", new Blob([content as BlobPart]), name);
    const res = await fetch(`${this.api}${path}`, { method: "POST", headers: this.headers("POST"), body: form });
    this.absorb(res);
    return res;
  }

  /** `send`, then the JSON body, failing with the answer when the status is not `expected`. */
  async json<T = any>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
    const res = await this.send(method, path, body);
    const text = await res.text();
    if (res.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${res.status}: ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

/** The first admin (`POST /api/v1/auth/initialize`), signed in. */
export async function initializeAdmin(api: string, email: string, password: string): Promise<Session> {
  const s = new Session(api);
  await s.json("POST", "/v1/auth/initialize", { email, password }, 201);
  return s;
}

/** A self-registered `user` (`POST /api/v1/auth/register`, registration on), signed in. */
export async function registerUser(api: string, email: string, password: string): Promise<Session> {
  const s = new Session(api);
  await s.json("POST", "/v1/auth/register", { email, password }, 201);
  return s;
}

/** Sign in with email and password (`POST /api/v1/auth/login/local`, DeerFlow's form). */
export async function login(api: string, email: string, password: string): Promise<Session> {
  const s = new Session(api);
  const res = await fetch(`${api}/v1/auth/login/local`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ username: email, password }).toString(),
  });
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
  s.absorb(res);
  return s;
}
