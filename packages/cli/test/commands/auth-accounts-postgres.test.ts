/**
 * On `database.backend: postgres` the accounts live in PostgreSQL: `deerflow
 * doctor`'s auth line and `deerflow serve`'s sign-in banner count them there,
 * not in an `auth.db` the data dir does not have.
 */
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openAccountStore } from "@deerflow-ts/server";
import { resolveAuthSettings } from "@deerflow-ts/server";
import { runDoctor } from "../../src/commands/doctor";
import { signInBanner } from "../../src/commands/serve-auth";
import { tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const SECRET = "p".repeat(48);

describe.skipIf(!SERVER)("account counts on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  let dir: string;
  let dataDir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "cliaccounts");
    dir = tempDir();
    dataDir = path.join(dir, ".deer-flow");
    process.env.DEERFLOW_TEST_ACCOUNTS_PG_URL = fresh.url;
    process.env.DEER_FLOW_JWT_SECRET = SECRET;
    writeFileSync(
      path.join(dir, "config.yaml"),
      ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_ACCOUNTS_PG_URL", "auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET", ""].join("\n"),
    );
    const store = openAccountStore({ dataDir, database: { backend: "postgres", postgres_url: fresh.url } });
    try {
      await store.create({ email: "admin@example.org", password: "correct-horse-battery", systemRole: "admin", needsSetup: false });
    } finally {
      await store.close();
    }
  });
  afterAll(async () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    await fresh?.drop();
  });

  it("doctor's auth line counts the PostgreSQL account and its admin", async () => {
    const findings = (await runDoctor({ cwd: dir, dataDir, skipModel: true, timeoutMs: 5000 })).filter((f) => f.check === "auth");
    expect(findings).toEqual([{ check: "auth", level: "ok", message: "enabled: secret set (48 characters, at least 32), 1 account(s), 1 admin(s); admin exists" }]);
    expect(existsSync(path.join(dataDir, "auth.db"))).toBe(false);
  });

  it("serve's sign-in banner counts them too, with no 'no admin yet' line", async () => {
    const settings = resolveAuthSettings({ enabled: true, jwt_secret: SECRET }, {});
    const lines = await signInBanner(settings, dataDir, "http://127.0.0.1:2026", { backend: "postgres", postgres_url: fresh.url });
    expect(lines).toEqual(["Sign-in: required (1 account(s), 1 admin(s))."]);
    expect(existsSync(path.join(dataDir, "auth.db"))).toBe(false);
  });

  it("an unreachable database is named in the banner (password masked), not reported as 0 accounts", async () => {
    const settings = resolveAuthSettings({ enabled: true, jwt_secret: SECRET }, {});
    const lines = await signInBanner(settings, dataDir, "http://127.0.0.1:2026", { backend: "postgres", postgres_url: "postgres://u:s3cret-pw@127.0.0.1:1/none" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Sign-in: required; the accounts could not be read: /);
    expect(lines[0]).not.toContain("s3cret-pw");
  });
});
