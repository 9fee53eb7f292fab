import { authEnabled, postLogin, SignedIn } from "../helpers/auth-session";

/**
 * Sign-in on, resolved without the process environment, so a
 * `DEER_FLOW_AUTH_DISABLED=1` in the shell running the tests cannot turn
 * these tests into auth-disabled ones.
 */
export const authOn = authEnabled;

/** One signed-in browser (see {@link SignedIn}), which can also upload files. */
export class Session extends SignedIn {
  /** A multipart upload of `files` (name → content) to `path`. */
  async upload(path: string, files: Record<string, string | Uint8Array>): Promise<Response> {
    const form = new FormData();
    for (const [name, content] of Object.entries(files)) form.append("files", new Blob([content as BlobPart]), name);
    const res = await fetch(`${this.api}${path}`, { method: "POST", headers: this.headers("POST"), body: form });
    this.jar.absorb(res);
    return res;
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
  const res = await postLogin(api, email, password);
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
  const s = new Session(api);
  s.jar.absorb(res);
  return s;
}
