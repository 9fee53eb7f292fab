import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openAccountStore } from "@deerflow-ts/server";
import { cleanEnv, runCli, tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const PASSWORD = "correct-horse-battery";

describe.skipIf(!SERVER)("deerflow users on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  let dir: string;
  // the URL comes from the environment, as DATABASE_URL would in a deployment
  const env = () => cleanEnv({ DATABASE_URL: fresh.url });
  const users = (args: string[], input = "") => runCli(["users", ...args], { cwd: dir, env: env(), input });

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "cliusers");
    dir = tempDir();
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DATABASE_URL", "auth:", "  enabled: true", "  jwt_secret: users-postgres-test-secret-0123456789abcdef", ""].join("\n"));
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("add, list, set-role and reset-password work on the configured database, and no auth.db is created", async () => {
    const listed = await users(["list", "--json"]);
    expect(listed.stderr).toBe("");
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const added = await users(["add", "alice@example.org", "--admin", "--password-stdin"], `${PASSWORD}\n`);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect((await users(["add", "bob@example.org", "--password-stdin"], "bob-password-1")).code).toBe(0);
    const dup = await users(["add", "BOB@example.org", "--password-stdin"], "bob-password-1");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("already has an account");

    const json = JSON.parse((await users(["list", "--json"])).stdout) as Array<Record<string, unknown>>;
    expect(json.map((u) => [u.email, u.system_role])).toEqual([
      ["alice@example.org", "admin"],
      ["bob@example.org", "user"],
    ]);
    // the last admin stays
    const demote = await users(["set-role", "alice@example.org", "user"]);
    expect(demote.code).toBe(1);
    expect(demote.stderr).toContain("only admin");
    expect((await users(["set-role", "bob@example.org", "admin"])).code).toBe(0);

    // what the gateway would open on this config sees the CLI's changes
    const store = openAccountStore({ dataDir: path.join(dir, ".deer-flow"), database: { backend: "postgres", postgres_url: fresh.url } });
    try {
      const bob = (await store.getByEmail("bob@example.org"))!;
      expect(bob.systemRole).toBe("admin");
      await store.tokens.create(bob.id, "ci", ["read"]);
      const reset = await users(["reset-password", "bob@example.org", "--password-stdin", "--revoke-tokens"], "a-brand-new-passphrase\n");
      expect(reset.code).toBe(0);
      expect(reset.stdout).toContain("Deleted 1 access token(s)");
      expect((await store.verifyCredentials("bob@example.org", "a-brand-new-passphrase"))?.id).toBe(bob.id);
      expect((await store.getById(bob.id))!.tokenVersion).toBe(1);
    } finally {
      await store.close();
    }
    const files = existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).map(String) : [];
    expect(files.filter((f) => /\.db(-wal|-shm)?$/.test(f))).toEqual([]);
  });
});
