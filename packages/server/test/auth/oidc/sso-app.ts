import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { appConfigSchema } from "@deerflow-ts/harness";
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { registerOidcRoutes } from "../../../src/auth/oidc";
import type { OidcProviderConfig } from "../../../src/auth/oidc";
import { resolveAuthSettings } from "../../../src/auth/settings";
import type { AuthSettings } from "../../../src/auth/settings";
import { openUserStore } from "../../../src/auth/user-store";
import type { UserStore } from "../../../src/auth/user-store";
import { HttpError } from "../../../src/http-error";
import { DEFAULT_OIDC_TEST_CLIENT, startOidcProvider } from "../../../src/testing";
import type { OidcProvider, OidcProviderOptions } from "../../../src/testing";

export const JWT_SECRET = "test-secret-0123456789-0123456789-abcdef";

/** A gateway-shaped app with only the SSO routes and a `me` that reads the session the test issuer set. */
export interface SsoApp {
  url: string;
  provider: OidcProvider;
  users: UserStore;
  /** Config of the `test` provider; edit it (and call {@link SsoApp.reconfigure}) between sign-ins. */
  settings: AuthSettings;
  /** Replace the `auth:` section the routes read. */
  reconfigure(auth: Record<string, unknown>): void;
  /** Replace it with a section that did not go through the config schema (as an embedder's `auth` option). */
  reconfigureRaw(auth: Record<string, unknown>): void;
  /** Move the routes' clock. */
  clock: { offsetMs: number };
  logs: string[];
  /** Back to a fresh state: default config, no faults, an empty account store, clock at now. */
  reset(): void;
  close(): Promise<void>;
}

/** The `auth:` section for one provider `test` pointing at `provider` (overridable per key). */
export function authSection(provider: OidcProvider, extra: Partial<Record<keyof OidcProviderConfig, unknown>> = {}, oidc: Record<string, unknown> = {}) {
  return {
    enabled: true,
    jwt_secret: JWT_SECRET,
    oidc: {
      enabled: true,
      ...oidc,
      providers: {
        test: {
          display_name: "Test IdP",
          issuer: provider.issuer,
          client_id: DEFAULT_OIDC_TEST_CLIENT.clientId,
          client_secret: DEFAULT_OIDC_TEST_CLIENT.clientSecret,
          ...extra,
        },
      },
    },
  };
}

function parsedSettings(auth: Record<string, unknown>): AuthSettings {
  // Through the config schema, so DeerFlow's defaults (auto_create_users, require_verified_email …) apply.
  const cfg = appConfigSchema.parse({ auth });
  return resolveAuthSettings(cfg.auth as never, {});
}

/**
 * Start the provider double and an app serving `registerOidcRoutes` under
 * `/api` on 127.0.0.1, with a real account store in a temp dir. The session
 * issued is a test cookie `test_session=<user id>`; `GET /api/v1/auth/me`
 * answers DeerFlow's user shape from it.
 */
export async function startSsoApp(opts: { provider?: OidcProviderOptions; auth?: (p: OidcProvider) => Record<string, unknown> } = {}): Promise<SsoApp> {
  const provider = await startOidcProvider({
    users: {
      alice: { sub: "sub-alice", email: "alice@example.com", name: "Alice" },
      bob: { sub: "sub-bob", email: "bob@other.org", emailVerified: false },
    },
    defaultUser: "alice",
    ...opts.provider,
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oidc-test-"));
  const clock = { offsetMs: 0 };
  const logs: string[] = [];
  const initial = () => parsedSettings(opts.auth ? opts.auth(provider) : authSection(provider));
  let generation = 0;
  const state = { settings: initial(), users: openUserStore(path.join(dataDir, String(generation))) };
  const users = () => state.users;

  const api = new Hono();
  registerOidcRoutes(api, {
    settings: () => state.settings,
    users,
    issueSession: (c, user, { rememberMe }) => {
      setCookie(c, "test_session", user.id, { httpOnly: true, path: "/", sameSite: "Lax", ...(rememberMe ? { maxAge: 3600 } : {}) });
    },
    now: () => Date.now() + clock.offsetMs,
    log: (m) => logs.push(m),
  });
  api.get("/v1/auth/me", (c) => {
    const user = state.users.getById(getCookie(c, "test_session") ?? "");
    if (!user) throw new HttpError(401, { code: "not_authenticated", message: "Authentication required" });
    return c.json({ id: user.id, email: user.email, system_role: user.systemRole, needs_setup: user.needsSetup, oauth_provider: user.oauthProvider });
  });
  api.get("/v1/ping", (c) => c.json({ ok: true }));
  const app = new Hono();
  app.onError((err, c) => {
    if (err instanceof HttpError) return c.json({ detail: err.detail }, err.status as 400);
    logs.push(`500: ${err.stack ?? err.message}`);
    return c.json({ detail: "Internal server error" }, 500);
  });
  app.route("/api", api);

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    provider,
    get users() {
      return state.users;
    },
    get settings() {
      return state.settings;
    },
    reconfigure(auth) {
      state.settings = parsedSettings(auth);
    },
    reconfigureRaw(auth) {
      state.settings = resolveAuthSettings(auth as never, {});
    },
    clock,
    logs,
    reset() {
      provider.setFaults([]);
      if (!opts.provider?.users) provider.selectUser("alice");
      provider.requests.length = 0;
      logs.length = 0;
      clock.offsetMs = 0;
      state.settings = initial();
      state.users.close();
      state.users = openUserStore(path.join(dataDir, String(++generation)));
    },
    async close() {
      await new Promise<void>((resolve) => {
        (server as import("node:http").Server).close(() => resolve());
        (server as import("node:http").Server).closeAllConnections?.();
      });
      state.users.close();
      await provider.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
