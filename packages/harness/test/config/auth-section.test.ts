import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { appConfigFromText, loadAppConfig } from "../../src/config";
import { FIXTURES, HAS_FIXTURES, memoryLogger, tempDir } from "./helpers";

const SECRET = "0123456789abcdef0123456789abcdef-long-enough";

function auth(text: string, env: Record<string, string> = {}) {
  return appConfigFromText(`config_version: 34\n${text}`, { env }).config.auth;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

/** The commented `# auth:` block of a config.example.yaml, uncommented. */
function commentedAuthExample(text: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l === "# auth:");
  expect(start, "the example has a commented auth: block").toBeGreaterThan(0);
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith("#")) break;
    // drop the commented-out keys inside the example (`#   # redirect_uri: …`), keep the structure
    const body = line.replace(/^# ?/, "");
    if (/^\s*#/.test(body)) continue;
    block.push(body.replace(/\s+#.*$/, ""));
  }
  return block.join("\n");
}

describe("config.yaml auth: section", () => {
  it("is off with DeerFlow's defaults when absent or empty", () => {
    for (const text of ["", "auth:\n", "auth: null\n"]) {
      expect(auth(text), JSON.stringify(text)).toMatchObject({
        enabled: false,
        jwt_secret: null,
        registration_enabled: null,
        session_days: 7,
        local: { allow_registration: null },
        oidc: { enabled: false, frontend_base_url: null, providers: {} },
      });
    }
  });

  it("reads DeerFlow's local.allow_registration next to our registration_enabled (both kept, lax booleans)", () => {
    expect(auth("auth:\n  local:\n    allow_registration: true\n")).toMatchObject({ registration_enabled: null, local: { allow_registration: true } });
    expect(auth("auth:\n  local: {allow_registration: 'no'}\n").local.allow_registration).toBe(false);
    const both = auth("auth:\n  registration_enabled: false\n  local: {allow_registration: true}\n");
    expect(both.registration_enabled).toBe(false);
    expect(both.local.allow_registration).toBe(true);
    expect(auth("auth:\n  registration_enabled: $REG\n", { REG: "on" }).registration_enabled).toBe(true);
  });

  it("fills an OIDC provider with DeerFlow's defaults", () => {
    const a = auth(
      [
        "auth:",
        "  oidc:",
        "    enabled: true",
        "    providers:",
        "      keycloak:",
        "        display_name: Keycloak",
        "        issuer: http://127.0.0.1:8080/realms/deerflow",
        "        client_id: deerflow",
        "        client_secret: $KC_SECRET",
        "",
      ].join("\n"),
      { KC_SECRET: "kc-secret" },
    );
    expect(a.oidc.enabled).toBe(true);
    expect(a.oidc.providers.keycloak).toEqual({
      display_name: "Keycloak",
      issuer: "http://127.0.0.1:8080/realms/deerflow",
      client_id: "deerflow",
      client_secret: "kc-secret",
      redirect_uri: null,
      scopes: ["openid", "email", "profile"],
      token_endpoint_auth_method: "client_secret_post",
      auto_create_users: true,
      require_verified_email: true,
      allowed_email_domains: [],
      admin_emails: [],
      pkce_enabled: true,
      nonce_enabled: true,
      authorization_endpoint: null,
      token_endpoint: null,
      userinfo_endpoint: null,
      jwks_uri: null,
    });
    const e = configError(() => auth("auth:\n  oidc:\n    providers:\n      x: {display_name: X, issuer: not-a-url, client_id: c}\n"));
    expect(e.message).toContain("auth.oidc.providers.x.issuer");
  });

  it("resolves jwt_secret from $DEER_FLOW_JWT_SECRET, session_days and enabled from strings", () => {
    const a = auth("auth:\n  enabled: 'true'\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n  session_days: '30'\n", { DEER_FLOW_JWT_SECRET: SECRET });
    expect(a).toMatchObject({ enabled: true, jwt_secret: SECRET, session_days: 30 });
    expect(auth("auth:\n  jwt_secret: ${DEER_FLOW_JWT_SECRET}\n", { DEER_FLOW_JWT_SECRET: SECRET }).jwt_secret).toBe(SECRET);
  });

  it("a missing $DEER_FLOW_JWT_SECRET is an error naming the key and the variable", () => {
    const e = configError(() => auth("auth:\n  enabled: true\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n"));
    expect(e.code).toBe("config_env_missing");
    expect(e.message).toContain("auth.jwt_secret: $DEER_FLOW_JWT_SECRET is not set");
    expect(e.message).toContain(".env");
  });

  it("loads $DEER_FLOW_JWT_SECRET from the .env next to config.yaml", () => {
    const t = tempDir();
    try {
      const file = t.write("config.yaml", "config_version: 34\nauth:\n  enabled: true\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n");
      t.write(".env", `DEER_FLOW_JWT_SECRET=${SECRET}\n`);
      const env: Record<string, string | undefined> = {};
      const loaded = loadAppConfig({ path: file, cwd: t.dir, env, logger: memoryLogger() });
      expect(loaded.config.auth).toMatchObject({ enabled: true, jwt_secret: SECRET });
      expect(env.DEER_FLOW_JWT_SECRET).toBe(SECRET);
    } finally {
      t.cleanup();
    }
  });

  it("refuses a secret shorter than 32 characters, and the error does not print the secret", () => {
    const short = "short-but-secret-value";
    for (const e of [
      configError(() => auth(`auth:\n  jwt_secret: ${short}\n`)),
      configError(() => auth("auth:\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n", { DEER_FLOW_JWT_SECRET: short })),
    ]) {
      expect(e.code).toBe("config_invalid");
      expect(e.message).toContain("auth.jwt_secret");
      expect(e.message).toContain("at least 32 characters");
      expect(e.message).not.toContain(short);
      expect(JSON.stringify((e.details as { issues: unknown }).issues)).not.toContain(short);
      // nor the error as printed (its cause included)
      expect(inspect(e, { depth: 20 })).not.toContain(short);
    }
    // 32 characters is enough
    expect(auth(`auth:\n  jwt_secret: ${"x".repeat(32)}\n`).jwt_secret).toHaveLength(32);
  });

  it("our config.example.yaml's commented auth block, uncommented, turns sign-in on with the secret from the environment", () => {
    const ours = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../config.example.yaml");
    const block = commentedAuthExample(readFileSync(ours, "utf8"));
    const a = auth(`${block}\n`, { DEER_FLOW_JWT_SECRET: SECRET, KEYCLOAK_CLIENT_SECRET: "kc" });
    expect(a).toMatchObject({ enabled: true, jwt_secret: SECRET, registration_enabled: false, session_days: 7 });
    expect(a.oidc.providers.keycloak).toMatchObject({ client_id: "deerflow", client_secret: "kc", pkce_enabled: true });
  });

  it("refuses a session_days that is not an integer", () => {
    expect(configError(() => auth("auth:\n  session_days: soon\n")).message).toContain("auth.session_days");
  });
});

describe.skipIf(!HAS_FIXTURES)("DeerFlow's example config with the auth section", () => {
  const example = path.join(FIXTURES, "config.example.yaml");

  it("config.example.yaml still loads (its auth block is commented out: auth stays off)", () => {
    const loaded = loadAppConfig({ path: example, env: {}, dotenv: false, logger: memoryLogger() });
    expect(loaded.config.auth).toMatchObject({ enabled: false, jwt_secret: null, registration_enabled: null });
  });

  it("its commented auth example, uncommented, is valid here with the same meaning", () => {
    const block = commentedAuthExample(readFileSync(example, "utf8"));
    expect(block).toContain("allow_registration: false");
    const a = auth(`${block}\n`, { KEYCLOAK_CLIENT_SECRET: "kc" });
    expect(a.local.allow_registration).toBe(false);
    expect(a.oidc.enabled).toBe(true);
    expect(a.oidc.providers.keycloak).toMatchObject({
      display_name: "Keycloak",
      client_id: "deerflow",
      client_secret: "kc",
      scopes: ["openid", "email", "profile"],
      auto_create_users: true,
      require_verified_email: true,
      admin_emails: [],
      pkce_enabled: true,
      nonce_enabled: true,
    });
  });
});
