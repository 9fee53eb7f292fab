/**
 * An admin made on SQLite (`deerflow init --auth` writes it to `auth.db` before
 * the config names PostgreSQL) does not sign in after the switch to
 * `database.backend: postgres`. Doctor says where those accounts are and how
 * to add them again, instead of a bare "no admin yet".
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openAccountStore } from "@deerflow-ts/server";
import { runDoctor } from "../../src/commands/doctor";
import { USERS_HELP } from "../../src/commands/users";
import { tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe.skipIf(!SERVER)("doctor: SQLite accounts left behind on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  let dir: string;
  let dataDir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "clistranded");
    dir = tempDir();
    dataDir = path.join(dir, ".deer-flow");
    process.env.DEERFLOW_TEST_STRANDED_PG_URL = fresh.url;
    process.env.DEER_FLOW_JWT_SECRET = "s".repeat(48);
    const sqlite = openAccountStore({ dataDir });
    try {
      await sqlite.create({ email: "admin@example.org", password: "correct-horse-battery", systemRole: "admin", needsSetup: false });
    } finally {
      await sqlite.close();
    }
  });
  afterAll(async () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    await fresh?.drop();
  });

  const auth = async () => (await runDoctor({ cwd: dir, dataDir, skipModel: true, timeoutMs: 5000 })).filter((f) => f.check === "auth");
  const configWith = (database: string[]) =>
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", ...database, "auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET", ""].join("\n"));

  it("names auth.db's accounts and the fix next to PostgreSQL's 'not initialised yet'", async () => {
    configWith(["database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_STRANDED_PG_URL"]);
    const findings = await auth();
    expect(findings.map((f) => f.level)).toEqual(["warn", "warn"]);
    // doctor only looks: the fresh database has no account tables
    expect(findings[0].message).toContain("accounts: not initialised yet (tables are created at first `serve`)");
    expect(findings[1].message).toBe(
      `${path.join(dataDir, "auth.db")} holds 1 account(s) (1 admin(s)) of the SQLite backend; with database.backend: postgres only PostgreSQL's accounts sign in, that file is not read`,
    );
    expect(findings[1].fix).toContain("deerflow users add EMAIL [--admin]");
  });

  it("says nothing about auth.db on SQLite, where that file is the store", async () => {
    configWith([]);
    const findings = await auth();
    expect(findings).toEqual([{ check: "auth", level: "ok", message: "enabled: secret set (48 characters, at least 32), 1 account(s), 1 admin(s); admin exists" }]);
  });
});

describe("deerflow users --help", () => {
  it("says where the accounts are on each backend, and that a switch does not copy them", () => {
    expect(USERS_HELP).toContain("auth.db in the data dir, or\nPostgreSQL's auth_* tables with database.backend: postgres");
    expect(USERS_HELP).toContain("accounts are not\ncopied when the backend changes");
  });
});
