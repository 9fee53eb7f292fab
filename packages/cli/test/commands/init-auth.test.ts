import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse as parseDotEnv } from "dotenv";
import { afterEach, describe, expect, it } from "vitest";
import { loadAppConfig, silentConfigLogger } from "@deerflow-ts/harness/config";
import { resolveAuthSettings } from "@deerflow-ts/server";
import { openUserStore } from "@deerflow-ts/server";
import type { UserStore } from "@deerflow-ts/server";
import { cleanEnv, runCli, runCliOnTty, tempDir } from "../helpers";

const env = cleanEnv();
/** Every question answered by a flag except the sign-in ones. */
const BASE = ["init", "--provider", "openai", "--api-key", "sk-1", "--model", "gpt-4.1", "--sandbox", "local", "--agents-api", "off"];
const PASSWORD = "correct-horse-battery";

const opened: UserStore[] = [];
function store(dir: string): UserStore {
  const s = openUserStore(path.join(dir, ".deer-flow"));
  opened.push(s);
  return s;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** The auth settings `deerflow serve` would run with in `dir` (config.yaml + .env, nothing inherited). */
function servedAuth(dir: string) {
  const processEnv: Record<string, string | undefined> = {};
  const loaded = loadAppConfig({ cwd: dir, env: processEnv, logger: silentConfigLogger });
  return resolveAuthSettings(loaded.config.auth, processEnv);
}

const dotEnv = (dir: string) => parseDotEnv(readFileSync(path.join(dir, ".env")));

describe("deerflow init: sign-in", { timeout: 120_000 }, () => {
  it("--auth writes auth.enabled with $DEER_FLOW_JWT_SECRET, a 48-byte random secret into .env (0600, never printed), and points to /setup", async () => {
    const dir = tempDir();
    const r = await runCli([...BASE, "--auth", "--yes"], { cwd: dir, env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const config = readFileSync(path.join(dir, "config.yaml"), "utf8");
    expect(config).toContain("auth:\n  enabled: true\n  jwt_secret: $DEER_FLOW_JWT_SECRET\n");
    const secret = dotEnv(dir).DEER_FLOW_JWT_SECRET;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(Buffer.from(secret, "base64url")).toHaveLength(48);
    expect(config).not.toContain(secret);
    expect(r.stdout).not.toContain(secret);
    expect(statSync(path.join(dir, ".env")).mode & 0o777).toBe(0o600);
    expect(r.stdout).toContain("Wrote a new random DEER_FLOW_JWT_SECRET");
    expect(r.stdout).toContain("open http://127.0.0.1:2026/setup");
    expect(store(dir).list()).toEqual([]);
    const auth = servedAuth(dir);
    expect(auth.enabled).toBe(true);
    expect(auth.jwtSecret).toBe(secret);
    expect(auth.registrationEnabled).toBe(false);
  });

  it("keeps an existing secret (rerun, or one already in .env) and tightens an older .env to 0600", async () => {
    const dir = tempDir();
    expect((await runCli([...BASE, "--auth", "--yes"], { cwd: dir, env })).code).toBe(0);
    const first = dotEnv(dir).DEER_FLOW_JWT_SECRET;
    const again = await runCli([...BASE, "--auth", "--yes", "--force"], { cwd: dir, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Kept the existing DEER_FLOW_JWT_SECRET");
    expect(dotEnv(dir).DEER_FLOW_JWT_SECRET).toBe(first);

    const other = tempDir();
    const own = "my-own-secret-that-is-long-enough-for-hs256";
    writeFileSync(path.join(other, ".env"), `export DEER_FLOW_JWT_SECRET="${own}"\nOTHER=1\n`);
    chmodSync(path.join(other, ".env"), 0o644);
    const r = await runCli([...BASE, "--auth", "--yes"], { cwd: other, env });
    expect(r.code).toBe(0);
    const values = dotEnv(other);
    expect(values).toMatchObject({ DEER_FLOW_JWT_SECRET: own, OTHER: "1", OPENAI_API_KEY: "sk-1" });
    expect(readFileSync(path.join(other, ".env"), "utf8").match(/DEER_FLOW_JWT_SECRET/g)).toHaveLength(1);
    expect(statSync(path.join(other, ".env")).mode & 0o777).toBe(0o600);
  });

  it("the default (and --no-auth) is no sign-in: no auth section, no secret", async () => {
    for (const flags of [["--yes"], ["--no-auth", "--yes"]]) {
      const dir = tempDir();
      const r = await runCli([...BASE, ...flags], { cwd: dir, env });
      expect(r.code, flags.join(" ")).toBe(0);
      expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).not.toContain("auth:");
      expect(dotEnv(dir).DEER_FLOW_JWT_SECRET).toBeUndefined();
      expect(servedAuth(dir)).toMatchObject({ enabled: false, disabledBy: "config" });
    }
    const both = await runCli([...BASE, "--auth", "--no-auth"], { cwd: tempDir(), env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--auth and --no-auth contradict each other");
  });

  it("asks the question with its one-line explanation, and creates the first admin from stdin answers", async () => {
    const dir = tempDir();
    // sign-in? yes; create the first admin? (default yes); email; password (the next stdin line)
    const r = await runCli(BASE, { cwd: dir, env, input: `yes\n\nAdmin@Example.org\n${PASSWORD}\n` });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Require sign-in (users and passwords)? (yes | no) [no]");
    expect(r.stdout).toMatch(/Without sign-in, everyone who can reach the server acts as its one local admin: fine while it listens only on this machine \(127\.0\.0\.1/);
    expect(r.stdout).toContain("Created the admin Admin@Example.org");
    expect(r.stdout).not.toContain(PASSWORD);
    const admin = await store(dir).verifyCredentials("admin@example.org", PASSWORD);
    expect(admin).toMatchObject({ systemRole: "admin", needsSetup: false });
    expect(servedAuth(dir).enabled).toBe(true);
    // a rerun finds the admin and does not offer another one
    const again = await runCli([...BASE, "--auth", "--force"], { cwd: dir, env, input: "" });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("An admin already exists (Admin@Example.org)");
  });

  it("--admin-email creates that admin with the password from the next stdin line; a weak one is refused", async () => {
    const dir = tempDir();
    const weak = await runCli([...BASE, "--admin-email", "root@example.org"], { cwd: dir, env, input: "password123\n" });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain("too common");
    expect(store(dir).list()).toEqual([]);
    const none = await runCli([...BASE, "--admin-email", "root@example.org", "--force"], { cwd: dir, env, input: "" });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no password for root@example.org on stdin");
    const ok = await runCli([...BASE, "--admin-email", "root@example.org", "--force"], { cwd: dir, env, input: `${PASSWORD}\n` });
    expect(ok.code).toBe(0);
    expect((await store(dir).verifyCredentials("root@example.org", PASSWORD))?.systemRole).toBe("admin");
    expect((await runCli([...BASE, "--no-auth", "--admin-email", "x@example.org"], { cwd: tempDir(), env })).code).toBe(2);
  });

  it("on a terminal, asks the admin password hidden and twice", async () => {
    const dir = tempDir();
    const r = await runCliOnTty(
      BASE,
      [
        { expect: "Require sign-in \\(users and passwords\\)\\? \\(yes \\| no\\) \\[no\\]: ", send: "yes\r" },
        { expect: "Create the first admin now\\? \\(yes \\| no\\) \\[yes\\]: ", send: "\r" },
        { expect: "Admin email: ", send: "tty@example.org\r" },
        { expect: "Password for tty@example.org: ", send: `${PASSWORD}\r` },
        { expect: "Repeat it: ", send: `${PASSWORD}\r` },
      ],
      { cwd: dir, env },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Created the admin tty@example.org");
    expect(r.stdout).not.toContain(PASSWORD);
    expect(await store(dir).verifyCredentials("tty@example.org", PASSWORD)).not.toBeNull();
  });
});
