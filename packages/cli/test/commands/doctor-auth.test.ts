import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/commands/doctor";
import { cleanEnv, runCli, tempDir } from "../helpers";

const SECRET = "q".repeat(64);
const PASSWORD = "correct-horse-battery";
const env = cleanEnv();

function setup(configLines: string[], dotEnv?: string): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, "config.yaml"), ["config_version: 34", "sandbox:", "  use: local", ...configLines, ""].join("\n"));
  if (dotEnv !== undefined) writeFileSync(path.join(dir, ".env"), dotEnv, { mode: 0o600 });
  return dir;
}

const ENABLED = ["auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET"];

/** The auth findings of `runDoctor` in `dir`, with `process.env` as the CLI would have it. */
async function authOf(dir: string, extraEnv: Record<string, string> = {}) {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith("DEER_FLOW_")) delete process.env[k];
  Object.assign(process.env, extraEnv);
  try {
    const findings = await runDoctor({ cwd: dir, dataDir: path.join(dir, ".deer-flow"), skipModel: true, timeoutMs: 1000 });
    return findings.filter((f) => f.check === "auth");
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

describe("deerflow doctor: the auth line", { timeout: 120_000 }, () => {
  it("through the CLI: enabled without an admin warns with the /setup fix; after users add it is ok", async () => {
    const dir = setup(ENABLED, `DEER_FLOW_JWT_SECRET=${SECRET}\n`);
    const before = await runCli(["doctor", "--skip-model"], { cwd: dir, env });
    expect(before.stdout).toContain("! auth: enabled: secret set (64 characters, at least 32), 0 account(s), 0 admin(s); no admin yet");
    expect(before.stdout).toContain("fix: Start `deerflow serve` and open http://127.0.0.1:2026/setup, or run `deerflow users add EMAIL --admin`.");
    expect(before.stdout).not.toContain(SECRET);
    expect((await runCli(["users", "add", "admin@example.org", "--admin", "--password-stdin"], { cwd: dir, env, input: PASSWORD })).code).toBe(0);
    const after = await runCli(["doctor", "--skip-model"], { cwd: dir, env });
    expect(after.stdout).toContain("✓ auth: enabled: secret set (64 characters, at least 32), 1 account(s), 1 admin(s); admin exists");
  });

  it("through the CLI: disabled by default, said plainly", async () => {
    const r = await runCli(["doctor", "--skip-model"], { cwd: setup([]), env });
    expect(r.stdout).toContain("✓ auth: disabled (no auth.enabled: true): every request acts as the local default admin");
  });

  it("DEER_FLOW_AUTH_DISABLED=1 over auth.enabled is a warning; open registration is named", async () => {
    const dir = setup(ENABLED, `DEER_FLOW_JWT_SECRET=${SECRET}\n`);
    const [envOff] = await authOf(dir, { DEER_FLOW_AUTH_DISABLED: "1" });
    expect(envOff).toMatchObject({ level: "warn" });
    expect(envOff.message).toContain("DEER_FLOW_AUTH_DISABLED=1 turns sign-in off");
    const open = setup([...ENABLED, "  local: {allow_registration: true}"], `DEER_FLOW_JWT_SECRET=${SECRET}\n`);
    expect((await authOf(open))[0].message).toContain("self-registration open");
  });

  it("enabled without a secret is an error with the fix; a missing $DEER_FLOW_JWT_SECRET is the env error", async () => {
    const [none] = await authOf(setup(["auth:", "  enabled: true"]));
    expect(none).toMatchObject({ level: "error" });
    expect(none.message).toContain("auth.jwt_secret is not set");
    expect(none.fix).toContain("deerflow init --auth");
    const dir = setup(ENABLED);
    const r = await runCli(["doctor", "--skip-model"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✗ env: $DEER_FLOW_JWT_SECRET is not set (used by auth.jwt_secret");
  });

  it("warns about a secret written into config.yaml and a .env with the secret that others can read", async () => {
    const inline = await authOf(setup(["auth:", "  enabled: true", `  jwt_secret: ${SECRET}`]));
    expect(inline.find((f) => f.message.includes("written in config.yaml itself"))?.level).toBe("warn");
    expect(JSON.stringify(inline)).not.toContain(SECRET);
    const dir = setup(ENABLED, `DEER_FLOW_JWT_SECRET=${SECRET}\n`);
    chmodSync(path.join(dir, ".env"), 0o644);
    const readable = (await authOf(dir)).find((f) => f.message.includes("other users can read it"));
    expect(readable).toMatchObject({ level: "warn", fix: `chmod 600 ${path.join(dir, ".env")}` });
    chmodSync(path.join(dir, ".env"), 0o600);
    expect((await authOf(dir)).some((f) => f.message.includes("other users can read it"))).toBe(false);
  });
});
