import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openAccountStore } from "@deerflow-ts/server";
import type { AccountStore } from "@deerflow-ts/server";
import { cleanEnv, runCli, tempDir } from "../helpers";

const PASSWORD = "correct-horse-battery";
const SECRET = /^dfp_[A-Za-z0-9_-]{43}$/m;
const env = cleanEnv();

const opened: AccountStore[] = [];
/** The account store `deerflow serve` would open for `dir` (the data dir, or the configured PostgreSQL). */
function store(dir: string, database?: { backend: "postgres"; postgres_url: string }): AccountStore {
  const s = openAccountStore({ dataDir: path.join(dir, ".deer-flow"), database });
  opened.push(s);
  return s;
}
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

describe("deerflow tokens (auth.db in the data dir)", { timeout: 300_000 }, () => {
  const cli = (dir: string, args: string[], input = "") => runCli(args, { cwd: dir, env, input });

  it("create prints the secret once, the server's store accepts it with its scopes; list shows it without the secret; revoke ends it", async () => {
    const dir = tempDir();
    expect((await cli(dir, ["users", "add", "alice@example.org", "--admin", "--password-stdin"], `${PASSWORD}\n`)).code).toBe(0);
    expect((await cli(dir, ["users", "add", "bob@example.org", "--password-stdin"], `${PASSWORD}\n`)).code).toBe(0);

    const none = await cli(dir, ["tokens", "list", "--user", "bob@example.org"]);
    expect(none).toMatchObject({ code: 0, stderr: "" });
    expect(none.stdout).toBe("bob@example.org has no access tokens. Create one with `deerflow tokens create NAME --user bob@example.org`.\n");

    const created = await cli(dir, ["tokens", "create", "ci runner", "--user", "bob@example.org", "--scopes", "read,run"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created token 'ci runner' \(id [0-9a-f-]{36}\) for bob@example\.org, scopes read, run\.\n/);
    const secret = SECRET.exec(created.stdout)![0];
    const s = store(dir);
    const owner = await s.tokens.resolve(secret);
    expect(owner?.user.email).toBe("bob@example.org");
    expect(owner?.token.scopes).toEqual(["read", "run"]);

    const list = await cli(dir, ["tokens", "list", "--user", "bob@example.org"]);
    const lines = list.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+SCOPES\s+CREATED\s+LAST USED$/);
    expect(lines[1]).toMatch(new RegExp(`^${owner!.token.id}\\s+ci runner\\s+read,run\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\s+\\d{4}-`));
    const json = JSON.parse((await cli(dir, ["tokens", "list", "--user", "bob@example.org", "--json"])).stdout) as Array<Record<string, unknown>>;
    expect(json).toEqual([{ id: owner!.token.id, name: "ci runner", scopes: ["read", "run"], created_at: expect.any(String), last_used_at: expect.any(String) }]);
    expect(list.stdout + JSON.stringify(json)).not.toContain(secret.slice(4));
    // another account does not see it
    expect((await cli(dir, ["tokens", "list", "--user", "alice@example.org", "--json"])).stdout.trim()).toBe("[]");

    const revoked = await cli(dir, ["tokens", "revoke", owner!.token.id, "--user", "bob@example.org"]);
    expect(revoked).toMatchObject({ code: 0, stderr: "" });
    expect(revoked.stdout).toBe(`Revoked token ${owner!.token.id} of bob@example.org; requests that send it are refused from now on.\n`);
    expect(await s.tokens.resolve(secret)).toBeUndefined();
    const again = await cli(dir, ["tokens", "revoke", owner!.token.id, "--user", "bob@example.org"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`Refused: bob@example.org has no token with the id ${owner!.token.id} (\`deerflow tokens list --user bob@example.org\` shows them).\n`);
  });

  it("the admin scope is for admin accounts only; --json create gives the secret once; the default scope is read", async () => {
    const dir = tempDir();
    expect((await cli(dir, ["users", "add", "alice@example.org", "--admin", "--password-stdin"], `${PASSWORD}\n`)).code).toBe(0);
    expect((await cli(dir, ["users", "add", "bob@example.org", "--password-stdin"], `${PASSWORD}\n`)).code).toBe(0);
    const refused = await cli(dir, ["tokens", "create", "ops", "--user", "bob@example.org", "--scopes", "admin"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Refused: only admin accounts can hold a token with the 'admin' scope, and bob@example.org is a user.");
    expect((await store(dir).tokens.list((await store(dir).getByEmail("bob@example.org"))!.id)).length).toBe(0);

    const ops = await cli(dir, ["tokens", "create", "ops", "--user", "alice@example.org", "--scopes", "admin,read", "--json"]);
    expect(ops.code).toBe(0);
    const body = JSON.parse(ops.stdout) as { token: string; scopes: string[]; name: string };
    expect(body).toMatchObject({ name: "ops", scopes: ["read", "admin"] });
    expect(body.token).toMatch(SECRET);
    const plain = await cli(dir, ["tokens", "create", "reader", "--user", "alice@example.org"]);
    expect(plain.stdout).toContain("scopes read.");
  });

  it("clear errors: no --user, unknown email, bad scope or arguments; a data dir without accounts gets no auth.db", async () => {
    const dir = tempDir();
    const noUser = await cli(dir, ["tokens", "list"]);
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain("deerflow tokens: tokens list needs --user EMAIL: the account whose tokens these are (`deerflow users list` shows the accounts).");
    const badScope = await cli(dir, ["tokens", "create", "x", "--user", "a@example.org", "--scopes", "read,write"]);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain("unknown scope 'write' in --scopes; use read, run, admin (comma-separated).");
    const twoNames = await cli(dir, ["tokens", "create", "a", "b", "--user", "a@example.org"]);
    expect(twoNames.code).toBe(2);
    expect(twoNames.stderr).toContain("tokens create takes one NAME, got 2.");
    const scopesOnList = await cli(dir, ["tokens", "list", "--user", "a@example.org", "--scopes", "read"]);
    expect(scopesOnList.code).toBe(2);
    expect(scopesOnList.stderr).toContain("--scopes does not apply to tokens list.");
    const unknownSub = await cli(dir, ["tokens", "mint"]);
    expect(unknownSub.code).toBe(2);
    expect(unknownSub.stderr).toContain("unknown subcommand 'mint'; use one of list, create, revoke.");
    for (const args of [["list"], ["create", "ci"], ["revoke", "some-id"]]) {
      const r = await cli(dir, ["tokens", ...args, "--user", "nobody@example.org"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe("Refused: No account with the email nobody@example.org (`deerflow users list` shows them; `deerflow users add` creates one).\n");
    }
    expect(existsSync(path.join(dir, ".deer-flow", "auth.db"))).toBe(false);
    const help = await cli(dir, ["tokens", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: deerflow tokens <subcommand> --user EMAIL");
    expect((await cli(dir, ["--help"])).stdout).toContain("tokens <sub>");
  });
});

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe.skipIf(!PG)("deerflow tokens on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  let dir: string;
  const cli = (args: string[], input = "") => runCli(args, { cwd: dir, env: cleanEnv({ DATABASE_URL: fresh.url }), input });
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(PG!, "clitokens");
    dir = tempDir();
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DATABASE_URL", "auth:", "  enabled: true", "  jwt_secret: tokens-postgres-test-secret-0123456789abcdef", ""].join("\n"));
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("create, list and revoke work on the configured database (the gateway's store sees them), and no auth.db is created", async () => {
    expect((await cli(["users", "add", "carol@example.org", "--password-stdin"], `${PASSWORD}\n`)).code).toBe(0);
    const created = await cli(["tokens", "create", "deploy", "--user", "carol@example.org", "--scopes", "run"]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    const secret = SECRET.exec(created.stdout)![0];
    const s = store(dir, { backend: "postgres", postgres_url: fresh.url });
    const owner = await s.tokens.resolve(secret);
    expect(owner?.user.email).toBe("carol@example.org");
    const listed = JSON.parse((await cli(["tokens", "list", "--user", "carol@example.org", "--json"])).stdout) as Array<{ id: string }>;
    expect(listed.map((t) => t.id)).toEqual([owner!.token.id]);
    expect((await cli(["tokens", "revoke", owner!.token.id, "--user", "carol@example.org"])).code).toBe(0);
    expect(await s.tokens.resolve(secret)).toBeUndefined();
    expect(existsSync(path.join(dir, ".deer-flow", "auth.db"))).toBe(false);
  });
});
