import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openUserStore } from "@deerflow-ts/server";
import type { UserStore } from "@deerflow-ts/server";
import { cleanEnv, runCli, runCliOnTty, tempDir } from "../helpers";

const PASSWORD = "correct-horse-battery";
const env = cleanEnv();

/** `deerflow users …` in `dir` with `input` on stdin. */
function users(dir: string, args: string[], input = "") {
  return runCli(["users", ...args], { cwd: dir, env, input });
}

const opened: UserStore[] = [];
/** The account store `deerflow serve` would open in `dir` (default data dir). */
function store(dir: string, dataDir = ".deer-flow"): UserStore {
  const s = openUserStore(path.join(dir, dataDir));
  opened.push(s);
  return s;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

describe("deerflow users", { timeout: 120_000 }, () => {
  it("add reads the password from stdin, stores it hashed in the serve data dir, and list shows the accounts", async () => {
    const dir = tempDir();
    const a = await users(dir, ["add", "alice@example.org", "--admin", "--password-stdin"], `${PASSWORD}\n`);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(a.stdout).toBe("Added admin alice@example.org.\n");
    expect((await users(dir, ["add", "bob@example.org", "--password-stdin"], "bob-password-1")).code).toBe(0);
    const s = store(dir);
    expect((await s.verifyCredentials("alice@example.org", PASSWORD))?.systemRole).toBe("admin");
    expect((await s.verifyCredentials("bob@example.org", "bob-password-1"))?.systemRole).toBe("user");
    expect(await s.verifyCredentials("alice@example.org", "wrong-password")).toBeNull();

    const list = await users(dir, ["list"]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^EMAIL\s+ROLE\s+CREATED\s+OAUTH$/);
    expect(lines[1]).toMatch(/^alice@example\.org\s+admin\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC\s+-$/);
    expect(lines[2]).toMatch(/^bob@example\.org\s+user\s+/);
    const json = JSON.parse((await users(dir, ["list", "--json"])).stdout) as Array<Record<string, unknown>>;
    expect(json.map((u) => [u.email, u.system_role, u.oauth_provider, u.needs_setup])).toEqual([
      ["alice@example.org", "admin", null, false],
      ["bob@example.org", "user", null, false],
    ]);
    expect(Date.parse(json[0].created_at as string)).not.toBeNaN();
    expect(json[0].id).toBe(s.getByEmail("alice@example.org")!.id);
    expect(JSON.stringify(json)).not.toContain("scrypt");
  });

  it("list of a fresh data dir creates nothing; add notes when the config it finds has sign-in off", async () => {
    const dir = tempDir();
    const empty = await users(dir, ["list", "--json"]);
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);
    expect(existsSync(path.join(dir, ".deer-flow"))).toBe(false);
    writeFileSync(path.join(dir, "config.yaml"), "config_version: 34\n");
    const add = await users(dir, ["add", "dan@example.org", "--password-stdin"], PASSWORD);
    expect(add.code).toBe(0);
    expect(add.stderr).toContain("sign-in is off in");
    expect(add.stderr).toContain("deerflow init");
  });

  it("uses --data-dir exactly as serve does (relative to the working directory)", async () => {
    const dir = tempDir();
    expect((await users(dir, ["add", "carol@example.org", "--password-stdin", "--data-dir", "var/df"], PASSWORD)).code).toBe(0);
    expect(existsSync(path.join(dir, "var/df/auth.db"))).toBe(true);
    expect(existsSync(path.join(dir, ".deer-flow"))).toBe(false);
    expect(store(dir, "var/df").getByEmail("carol@example.org")).toBeDefined();
  });

  it("never takes a password as an argument, and without a terminal says how to pipe it", async () => {
    const dir = tempDir();
    const positional = await users(dir, ["add", "alice@example.org", PASSWORD]);
    expect(positional.code).toBe(2);
    expect(positional.stderr).toContain("Passwords are never taken as arguments");
    const flag = await users(dir, ["add", "alice@example.org", "--password", PASSWORD]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/Unknown option '--password'/);
    const noTty = await users(dir, ["add", "alice@example.org"]);
    expect(noTty.code).toBe(2);
    expect(noTty.stderr).toContain("no terminal to ask for the password");
    expect(noTty.stderr).toContain("--password-stdin");
    // nothing was created by the refused commands
    expect(store(dir).list()).toEqual([]);
  });

  it("refuses weak passwords, two lines on stdin, bad emails and an existing email (case-insensitive)", async () => {
    const dir = tempDir();
    const short = await users(dir, ["add", "a@example.org", "--password-stdin"], "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 8 characters");
    const common = await users(dir, ["add", "a@example.org", "--password-stdin"], "Password123\n");
    expect(common.code).toBe(2);
    expect(common.stderr).toContain("too common");
    const twoLines = await users(dir, ["add", "a@example.org", "--password-stdin"], `${PASSWORD}\nsecond-line\n`);
    expect(twoLines.code).toBe(2);
    expect(twoLines.stderr).toContain("exactly one line");
    const badEmail = await users(dir, ["add", "not-an-email", "--password-stdin"], PASSWORD);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toContain("'not-an-email' is not an email address");
    expect((await users(dir, ["add", "a@example.org", "--password-stdin"], PASSWORD)).code).toBe(0);
    const dup = await users(dir, ["add", "A@Example.ORG", "--password-stdin"], PASSWORD);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("A@Example.ORG already has an account");
    expect(store(dir).list().map((u) => u.email)).toEqual(["a@example.org"]);
  });

  it("set-role promotes and demotes, and refuses demoting the last admin with exit code 1", async () => {
    const dir = tempDir();
    await users(dir, ["add", "alice@example.org", "--admin", "--password-stdin"], PASSWORD);
    await users(dir, ["add", "bob@example.org", "--password-stdin"], PASSWORD);
    const last = await users(dir, ["set-role", "alice@example.org", "user"]);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain("Refused: alice@example.org is the only admin");
    expect(store(dir).getByEmail("alice@example.org")!.systemRole).toBe("admin");

    const promote = await users(dir, ["set-role", "bob@example.org", "admin"]);
    expect(promote.code).toBe(0);
    expect(promote.stdout).toContain("bob@example.org is now admin.");
    expect((await users(dir, ["set-role", "bob@example.org", "admin"])).stdout).toContain("already admin");
    expect((await users(dir, ["set-role", "alice@example.org", "user"])).code).toBe(0);
    const s = store(dir);
    expect(s.getByEmail("alice@example.org")!.systemRole).toBe("user");
    expect(s.countAdmins()).toBe(1);
    expect((await users(dir, ["set-role", "bob@example.org", "user"])).code).toBe(1);

    const unknown = await users(dir, ["set-role", "nobody@example.org", "admin"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No account with the email nobody@example.org");
    expect((await users(dir, ["set-role", "bob@example.org", "root"])).code).toBe(2);
  });

  it("reset-password changes the password and bumps the token version; --revoke-tokens deletes access tokens", async () => {
    const dir = tempDir();
    await users(dir, ["add", "alice@example.org", "--admin", "--password-stdin"], PASSWORD);
    const before = store(dir).getByEmail("alice@example.org")!;
    store(dir).tokens.create(before.id, "ci", ["read"]);
    const r = await users(dir, ["reset-password", "alice@example.org", "--password-stdin"], "a-new-long-password\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("every session it had is signed out");
    expect(r.stdout).toContain("Its 1 access token(s) still work; add --revoke-tokens");
    const s = store(dir);
    expect(s.getByEmail("alice@example.org")!.tokenVersion).toBe(before.tokenVersion + 1);
    expect(await s.verifyCredentials("alice@example.org", PASSWORD)).toBeNull();
    expect(await s.verifyCredentials("alice@example.org", "a-new-long-password")).not.toBeNull();
    const revoke = await users(dir, ["reset-password", "alice@example.org", "--password-stdin", "--revoke-tokens"], "third-long-password");
    expect(revoke.stdout).toContain("Deleted 1 access token(s)");
    expect(store(dir).tokens.list(before.id)).toEqual([]);
    const unknown = await users(dir, ["reset-password", "nobody@example.org", "--password-stdin"], PASSWORD);
    expect(unknown.code).toBe(1);
  });

  it("rejects unknown subcommands and flags that do not apply", async () => {
    const dir = tempDir();
    expect((await users(dir, ["remove", "a@example.org"])).code).toBe(2);
    expect((await users(dir, ["list", "--admin"])).stderr).toContain("--admin does not apply to users list");
    const help = await users(dir, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("never taken as arguments");
  });
});

describe("deerflow users on a terminal", { timeout: 120_000 }, () => {
  it("asks twice at a hidden prompt: nothing typed is echoed, a mismatch is asked again", async () => {
    const dir = tempDir();
    const r = await runCliOnTty(
      ["users", "add", "alice@example.org", "--admin"],
      [
        { expect: "Password for alice@example.org: ", send: `${PASSWORD}\r` },
        { expect: "Repeat it: ", send: "something-else-typed\r" },
        { expect: "The two entries differ\\. Try again\\.", send: "" },
        { expect: "Password for alice@example.org: ", send: "short\r" },
        { expect: "at least 8 characters\\. Try again\\.", send: "" },
        { expect: "Password for alice@example.org: ", send: `${PASSWORD}\r` },
        { expect: "Repeat it: ", send: `${PASSWORD}\r` },
      ],
      { cwd: dir, env },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added admin alice@example.org.");
    for (const typed of [PASSWORD, "something-else-typed", "short"]) expect(r.stdout).not.toContain(typed);
    expect(await store(dir).verifyCredentials("alice@example.org", PASSWORD)).not.toBeNull();
  });

  it("--password-stdin on a terminal is refused (the password would be echoed); the prompt is the way there", async () => {
    const dir = tempDir();
    const r = await runCliOnTty(["users", "add", "alice@example.org", "--password-stdin"], [], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("--password-stdin reads a pipe, but stdin is a terminal");
    expect(store(dir).list()).toEqual([]);
  });

  it("Ctrl-C at the prompt cancels (exit 130) and creates nothing", async () => {
    const dir = tempDir();
    const r = await runCliOnTty(["users", "add", "alice@example.org"], [{ expect: "Password for alice@example.org: ", send: "abc\u0003" }], { cwd: dir, env });
    expect(r.code).toBe(130);
    expect(r.stdout).toContain("Cancelled.");
    expect(store(dir).list()).toEqual([]);
  });
});
