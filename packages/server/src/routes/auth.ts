import type { Context, Hono } from "hono";
import { z } from "zod";
import { AuthError, clearSession, emailKey, isSecureRequest, issueSession, maybeUserOf, passwordProblem, requireAdmin, throttleAddress, TOKEN_SCOPES, userOf } from "../auth";
import type { RequestUser, UserRecord } from "../auth";
import { listOidcProviders, registerOidcRoutes } from "../auth/oidc";
import type { GatewayContext } from "../context";
import { HttpError, validationError } from "../http-error";
import { readBodyLimited, readJson } from "../validate";

/** Auth bodies are a few fields: a small cap keeps a password form from being a memory sink. */
const AUTH_BODY_LIMIT = 64 * 1024;

/** DeerFlow's `UserResponse`. */
function userResponse(u: { id: string; email: string; systemRole: string; needsSetup: boolean; oauthProvider: string | null }) {
  return { id: u.id, email: u.email, system_role: u.systemRole, needs_setup: u.needsSetup, oauth_provider: u.oauthProvider };
}

function authDetail(status: number, code: string, message: string): HttpError {
  return new HttpError(status, { code, message });
}

/** An {@link AuthError} as DeerFlow's HTTP answer. */
function toHttp(err: unknown): unknown {
  if (!(err instanceof AuthError)) return err;
  switch (err.code) {
    case "auth.email_exists":
      return authDetail(400, "email_already_exists", err.message);
    case "auth.already_initialized":
      return authDetail(409, "system_already_initialized", err.message);
    case "auth.last_admin":
      return authDetail(409, "last_admin", err.message);
    case "auth.user_not_found":
      return new HttpError(404, "User not found");
    case "auth.weak_password":
      return validationError([{ type: "value_error", loc: ["body", "password"], msg: err.message }]);
    case "auth.invalid_email":
      return validationError([{ type: "value_error", loc: ["body", "email"], msg: err.message }]);
    default:
      return new HttpError(400, err.message);
  }
}

async function mapped<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toHttp(err);
  }
}

/** A password field with DeerFlow's rule (≥ 8 characters, not a common one) as a 422. */
const password = z.string().superRefine((v, ctx) => {
  const problem = passwordProblem(v);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
/** The longest email an account can have (the store refuses longer ones). */
const MAX_EMAIL_LENGTH = 320;
const email = z.email().max(MAX_EMAIL_LENGTH);

const credentialsSchema = z.object({ email, password, remember_me: z.boolean().default(true) });
const changePasswordSchema = z.object({
  current_password: z.string(),
  new_password: password,
  new_email: email.nullish(),
  remember_me: z.boolean().nullish(),
});
const tokenSchema = z.object({ name: z.string().trim().min(1).max(100), scopes: z.array(z.enum(TOKEN_SCOPES as [string, ...string[]])).min(1) });
const newUserSchema = z.object({ email, password, system_role: z.enum(["admin", "user"]).default("user") });
const roleSchema = z.object({ system_role: z.enum(["admin", "user"]) });

function truthy(v: string | undefined, def: boolean): boolean {
  if (v === undefined || v === "") return def;
  return ["1", "true", "on", "yes"].includes(v.toLowerCase());
}

/** The OAuth2 password form of `login/local` (`application/x-www-form-urlencoded` or multipart). */
async function readLoginForm(c: Context): Promise<{ username: string; password: string; rememberMe: boolean }> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  let fields: Record<string, string | undefined> = {};
  // both forms capped while they arrive: this route is open to anyone
  if (type === "application/x-www-form-urlencoded") {
    fields = Object.fromEntries(new URLSearchParams(new TextDecoder().decode(await readBodyLimited(c, AUTH_BODY_LIMIT))));
  } else if (type === "multipart/form-data") {
    const bytes = await readBodyLimited(c, AUTH_BODY_LIMIT);
    const form = await new Response(new Uint8Array(bytes), { headers: { "content-type": c.req.header("content-type")! } }).formData().catch(() => undefined);
    if (form) for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
  }
  const missing = ["username", "password"].filter((k) => !fields[k]);
  if (missing.length) throw validationError(missing.map((k) => ({ type: "missing", loc: ["body", k], msg: "Field required" })));
  return { username: fields.username!, password: fields.password!, rememberMe: truthy(fields.remember_me, true) };
}

function sessionInfo(user: UserRecord): { id: string; tokenVersion: number } {
  return { id: user.id, tokenVersion: user.tokenVersion };
}

/**
 * DeerFlow's `/api/v1/auth/*` (local accounts, cookie sessions, setup) plus
 * personal access tokens and admin account management. Every answer and
 * status code follows DeerFlow's routers/auth.py; the differences are
 * documented in docs/auth.md.
 */
export function registerAuthRoutes(app: Hono, ctx: GatewayContext): void {
  const auth = ctx.auth;
  const issue = (c: Context, user: { id: string; tokenVersion: number }, rememberMe?: boolean) =>
    issueSession(c, auth.settings(), user, { rememberMe, proxies: auth.proxies, nowMs: auth.now() });

  app.post("/v1/auth/login/local", async (c) => {
    const form = await readLoginForm(c);
    const settings = auth.settings();
    if (!settings.enabled) {
      const expiresIn = await issue(c, { id: auth.disabledUser.id, tokenVersion: 0 }, form.rememberMe);
      return c.json({ expires_in: expiresIn, needs_setup: false });
    }
    const store = auth.users();
    const account = emailKey(form.username);
    // no account has such a name: nothing to guess, so nothing to count (a failure row per 64 KiB name would grow auth.db)
    if (account.length > MAX_EMAIL_LENGTH) throw authDetail(401, "invalid_credentials", "Incorrect email or password");
    const address = throttleAddress(c, auth.proxies);
    // counted before the password check (see LoginThrottle.begin): parallel guesses get no extra tries
    const locked = await store.throttle.begin(account, address, auth.now());
    if (locked > 0) throw new HttpError(429, "Too many login attempts. Try again later.", { "Retry-After": String(Math.ceil(locked / 1000)) });
    const user = await store.verifyCredentials(form.username, form.password);
    if (!user) throw authDetail(401, "invalid_credentials", "Incorrect email or password");
    await store.throttle.clear(account, address);
    const expiresIn = await issue(c, sessionInfo(user), form.rememberMe);
    return c.json({ expires_in: expiresIn, needs_setup: user.needsSetup });
  });

  app.post("/v1/auth/register", async (c) => {
    const body = await readJson(c, credentialsSchema, AUTH_BODY_LIMIT);
    const settings = auth.settings();
    if (!settings.enabled) {
      await issue(c, { id: auth.disabledUser.id, tokenVersion: 0 }, body.remember_me);
      return c.json(userResponse(auth.disabledUser), 201);
    }
    if (!settings.registrationEnabled) throw authDetail(403, "registration_disabled", "Self-registration is disabled on this deployment");
    const user = await mapped(() => auth.users().create({ email: body.email, password: body.password, systemRole: "user" }));
    await issue(c, sessionInfo(user), body.remember_me);
    return c.json(userResponse(user), 201);
  });

  app.post("/v1/auth/initialize", async (c) => {
    const body = await readJson(c, credentialsSchema, AUTH_BODY_LIMIT);
    if (!auth.settings().enabled) throw authDetail(409, "system_already_initialized", "System already initialized (sign-in is disabled: every request is the default admin)");
    const store = auth.users();
    if ((await store.countAdmins()) > 0) throw authDetail(409, "system_already_initialized", "System already initialized");
    const user = await mapped(() => store.initializeAdmin({ email: body.email, password: body.password }));
    await issue(c, sessionInfo(user), body.remember_me);
    return c.json(userResponse(user), 201);
  });

  app.post("/v1/auth/logout", async (c) => {
    const user = maybeUserOf(c);
    // stronger than clearing cookies: the JWT itself stops working, wherever a copy of it is
    if (auth.settings().enabled && user?.source === "session") await auth.users().bumpTokenVersion(user.id);
    clearSession(c, auth.proxies);
    return c.json({ message: "Successfully logged out" });
  });

  app.post("/v1/auth/change-password", async (c) => {
    const caller = userOf(c);
    const body = await readJson(c, changePasswordSchema, AUTH_BODY_LIMIT);
    if (caller.source === "disabled") {
      throw authDetail(400, "invalid_credentials", "Password changes are not available while sign-in is disabled (DEER_FLOW_AUTH_DISABLED=1 or no auth.enabled).");
    }
    const store = auth.users();
    const account = await store.getById(caller.id);
    if (!account) throw authDetail(401, "user_not_found", "User not found");
    if (!account.hasPassword) throw authDetail(400, "invalid_credentials", "OAuth users cannot change password");
    const address = throttleAddress(c, auth.proxies);
    const key = emailKey(account.email);
    const locked = await store.throttle.begin(key, address, auth.now());
    if (locked > 0) throw new HttpError(429, "Too many login attempts. Try again later.", { "Retry-After": String(Math.ceil(locked / 1000)) });
    if (!(await store.checkPassword(account.id, body.current_password))) throw authDetail(400, "invalid_credentials", "Current password is incorrect");
    await store.throttle.clear(key, address);
    if (body.new_email != null) await mapped(() => store.setEmail(account.id, body.new_email!, { completeSetup: account.needsSetup }));
    const version = await mapped(() => store.setPassword(account.id, body.new_password));
    if (caller.source === "session") await issue(c, { id: account.id, tokenVersion: version }, body.remember_me ?? undefined);
    return c.json({ message: "Password changed successfully" });
  });

  app.get("/v1/auth/me", (c) => c.json(userResponse(userOf(c))));

  app.get("/v1/auth/setup-status", async (c) => {
    const settings = auth.settings();
    if (!settings.enabled) return c.json({ needs_setup: false, registration_enabled: false });
    return c.json({ needs_setup: (await auth.users().countAdmins()) === 0, registration_enabled: settings.registrationEnabled });
  });

  app.get("/v1/auth/providers", (c) => c.json({ providers: listOidcProviders(auth.settings()) }));
  registerOidcRoutes(app, {
    settings: () => auth.settings(),
    users: () => auth.users(),
    issueSession: (c, user, { rememberMe }) => issue(c, sessionInfo(user), rememberMe),
    isSecure: (c) => isSecureRequest(c, auth.proxies),
    now: () => auth.now(),
    log: ctx.options.log,
  });

  registerTokenRoutes(app, ctx);
  registerUserAdminRoutes(app, ctx);
}

function signedInAccount(ctx: GatewayContext, c: Context): RequestUser {
  const user = userOf(c);
  if (user.source === "disabled") throw new HttpError(400, "Access tokens need sign-in: set auth.enabled: true (and auth.jwt_secret) in config.yaml.");
  void ctx;
  return user;
}

function tokenResponse(t: { id: string; name: string; scopes: readonly string[]; createdAt: string; lastUsedAt: string | null }) {
  return { id: t.id, name: t.name, scopes: t.scopes, created_at: t.createdAt, last_used_at: t.lastUsedAt };
}

/** `/api/v1/auth/tokens`: the caller's personal access tokens. */
function registerTokenRoutes(app: Hono, ctx: GatewayContext): void {
  app.post("/v1/auth/tokens", async (c) => {
    const user = signedInAccount(ctx, c);
    const body = await readJson(c, tokenSchema, AUTH_BODY_LIMIT);
    const scopes = body.scopes as Array<"read" | "run" | "admin">;
    if (scopes.includes("admin") && user.systemRole !== "admin") throw new HttpError(403, "Only admins can create tokens with the 'admin' scope");
    const t = await mapped(() => ctx.auth.users().tokens.create(user.id, body.name, scopes, new Date(ctx.auth.now())));
    return c.json({ id: t.id, token: t.secret, name: t.name, scopes: t.scopes, created_at: t.createdAt }, 201);
  });
  app.get("/v1/auth/tokens", async (c) => {
    const user = signedInAccount(ctx, c);
    return c.json({ tokens: (await ctx.auth.users().tokens.list(user.id)).map(tokenResponse) });
  });
  app.delete("/v1/auth/tokens/:id", async (c) => {
    const user = signedInAccount(ctx, c);
    if (!(await ctx.auth.users().tokens.revoke(user.id, c.req.param("id")))) throw new HttpError(404, "Token not found");
    return c.json({ message: "Token revoked" });
  });
}

function adminUserResponse(u: UserRecord) {
  return { ...userResponse(u), created_at: u.createdAt };
}

/** `/api/v1/auth/users`: accounts, for admins (the web UI's and the CLI's account management). */
function registerUserAdminRoutes(app: Hono, ctx: GatewayContext): void {
  const users = () => ctx.auth.users();
  app.get("/v1/auth/users", async (c) => {
    requireAdmin(c, "Only admins can list users");
    return c.json({ users: (await users().list()).map(adminUserResponse) });
  });
  app.post("/v1/auth/users", async (c) => {
    requireAdmin(c, "Only admins can create users");
    const body = await readJson(c, newUserSchema, AUTH_BODY_LIMIT);
    const user = await mapped(() => users().create({ email: body.email, password: body.password, systemRole: body.system_role }));
    return c.json(adminUserResponse(user), 201);
  });
  app.patch("/v1/auth/users/:id", async (c) => {
    requireAdmin(c, "Only admins can change roles");
    const body = await readJson(c, roleSchema, AUTH_BODY_LIMIT);
    const user = await mapped(() => users().setRole(c.req.param("id"), body.system_role));
    return c.json(adminUserResponse(user));
  });
  app.delete("/v1/auth/users/:id", async (c) => {
    requireAdmin(c, "Only admins can delete users");
    await mapped(() => users().delete(c.req.param("id")));
    return c.json({ message: "User deleted" });
  });
}
