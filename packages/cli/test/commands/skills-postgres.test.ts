/**
 * `deerflow skills enable/disable` on `database.backend: postgres`: a custom
 * skill's state goes to the table the server reads (deerflow_skill_states),
 * not to a `_skill_states.json` the server would never look at.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userSkillStatesFile } from "@deerflow-ts/harness/skills";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe.skipIf(!SERVER)("deerflow skills on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "cliskills");
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it("disable and enable of a custom skill write the user's row, and list reads it back", async () => {
    const dir = tempDir("df-skills-pg-");
    const dataDir = path.join(dir, ".deer-flow");
    mkdirSync(path.join(dir, "skills", "public"), { recursive: true });
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DATABASE_URL", ""].join("\n"));
    const skill = path.join(dataDir, "users", "default", "skills", "custom", "notes");
    mkdirSync(skill, { recursive: true });
    writeFileSync(path.join(skill, "SKILL.md"), "---\nname: notes\ndescription: Take notes\n---\n# Notes\n");
    const env = cleanEnv({ DATABASE_URL: fresh.url });
    const off = await runCli(["skills", "disable", "notes"], { cwd: dir, env });
    expect(off.stdout).toContain("Skill 'notes' (custom) is now disabled.");
    expect(off.code).toBe(0);
    expect(existsSync(userSkillStatesFile(dataDir, "default"))).toBe(false);
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      expect((await client.query("SELECT user_id, skill_name, enabled FROM deerflow_skill_states")).rows).toEqual([{ user_id: "default", skill_name: "notes", enabled: false }]);
      const list = JSON.parse((await runCli(["skills", "list", "--json"], { cwd: dir, env })).stdout) as { skills: Array<{ name: string; enabled: boolean }> };
      expect(list.skills.find((s) => s.name === "notes")?.enabled).toBe(false);
      expect((await runCli(["skills", "enable", "notes"], { cwd: dir, env })).code).toBe(0);
      expect((await client.query("SELECT enabled FROM deerflow_skill_states WHERE skill_name = 'notes'")).rows).toEqual([{ enabled: true }]);
    } finally {
      await client.end();
    }
  });
});
