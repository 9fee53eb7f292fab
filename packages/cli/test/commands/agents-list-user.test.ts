/**
 * With sign-in on, custom agents belong to accounts (uuid ids), so a bare
 * `deerflow agents list` (user `default`) finds none. The empty answer names
 * the user it read and how to name an account; `--user EMAIL` resolves the
 * account's id.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createCustomAgent } from "@deerflow-ts/harness/agents";
import { openAccountStore } from "@deerflow-ts/server";
import { cleanEnv, runCli, tempDir } from "../helpers";

describe("deerflow agents list --user", { timeout: 180_000 }, () => {
  it("lists an account's agents by email, and an empty default list says whose it was and to add --user EMAIL", async () => {
    const dir = tempDir("df-agents-user-");
    const dataDir = path.join(dir, ".deer-flow");
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET", ""].join("\n"));
    writeFileSync(path.join(dir, ".env"), `DEER_FLOW_JWT_SECRET=${"j".repeat(48)}\n`, { mode: 0o600 });
    const accounts = openAccountStore({ dataDir });
    let id: string;
    try {
      id = (await accounts.create({ email: "alice@example.org", password: "correct-horse-battery", systemRole: "admin", needsSetup: false })).id;
    } finally {
      await accounts.close();
    }
    createCustomAgent(dataDir, id, { name: "poet", description: "Writes poems" }, "Speak in rhyme.");
    const env = cleanEnv();

    const bare = await runCli(["agents", "list"], { cwd: dir, env });
    expect(bare.code).toBe(0);
    expect(bare.stdout.trim()).toBe("No custom agents for user 'default' (agent_storage.backend: file). With sign-in on, agents belong to accounts: add --user EMAIL.");

    const byEmail = await runCli(["agents", "list", "--user", "alice@example.org"], { cwd: dir, env });
    expect(byEmail.code).toBe(0);
    expect(byEmail.stdout.trim()).toBe("poet  Writes poems");

    const byId = await runCli(["agents", "list", "--user", id, "--json"], { cwd: dir, env });
    expect(JSON.parse(byId.stdout)).toEqual([{ name: "poet", description: "Writes poems" }]);

    const unknown = await runCli(["agents", "list", "--user", "bob@example.org"], { cwd: dir, env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Refused: no account has the email 'bob@example.org' (see `deerflow users list`).");
  });
});
