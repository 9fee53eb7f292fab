/**
 * Users' skill states on PostgreSQL: one upsert per toggle, so two stores
 * (two processes' pools) over one database toggling different skills of
 * one user at the same time lose nothing — the per-user JSON file's
 * read-modify-write can. Through the registry, a custom skill's toggle lands
 * in the table and no `_skill_states.json` is written.
 */
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openPgPool } from "../../src/postgres";
import { PostgresUserSkillStates, SkillRegistry, userSkillStatesFile } from "../../src/skills";
import { tempDir, writeSkill } from "./helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe.skipIf(!SERVER)("PostgresUserSkillStates", () => {
  let fresh: FreshDatabase;
  const pools: pg.Pool[] = [];
  const dirs: string[] = [];
  const pool = async () => {
    const p = await openPgPool({ url: fresh.url, max: 4, log: () => undefined });
    pools.push(p);
    return p;
  };
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "skillstates");
  });
  afterAll(async () => {
    for (const p of pools) await p.end();
    await fresh?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("two stores over one database toggling different skills of one user concurrently keep every toggle", async () => {
    const a = new PostgresUserSkillStates(await pool());
    const b = new PostgresUserSkillStates(await pool());
    const names = Array.from({ length: 40 }, (_, i) => `skill-${i}`);
    // even skills through a, odd through b, all at once; each ends disabled iff its index is divisible by 3
    await Promise.all(names.map((name, i) => (i % 2 ? b : a).set("u1", name, i % 3 !== 0)));
    const expected = Object.fromEntries(names.map((n, i) => [n, { enabled: i % 3 !== 0 }]));
    expect(await a.get("u1")).toEqual(expected);
    expect(await b.get("u1")).toEqual(expected);
    // flip all of them again concurrently, the other store each time
    await Promise.all(names.map((name, i) => (i % 2 ? a : b).set("u1", name, i % 3 === 0)));
    expect(await b.get("u1")).toEqual(Object.fromEntries(names.map((n, i) => [n, { enabled: i % 3 === 0 }])));
    expect(await a.get("u2")).toEqual({});
    await a.drop("u1", "skill-0");
    await b.drop("u1", "never-set");
    expect(Object.keys(await b.get("u1"))).toHaveLength(39);
  });

  it("the registry stores a custom skill's toggle in the table, not in _skill_states.json", async () => {
    const root = tempDir("pgstates");
    dirs.push(root);
    const dataDir = path.join(root, "data");
    writeSkill(path.join(dataDir, "users", "u1", "skills", "custom", "notes"), "name: notes\ndescription: Take notes");
    const p = await pool();
    const registry = new SkillRegistry({ skillsPath: path.join(root, "skills"), dataDir, projectRoot: root, userStates: new PostgresUserSkillStates(p), cacheMs: 0 });
    expect((await registry.setEnabled("notes", false, "u1")).enabled).toBe(false);
    expect(existsSync(userSkillStatesFile(dataDir, "u1"))).toBe(false);
    const rows = await p.query("SELECT user_id, skill_name, enabled FROM deerflow_skill_states WHERE user_id = 'u1' AND skill_name = 'notes'");
    expect(rows.rows).toEqual([{ user_id: "u1", skill_name: "notes", enabled: false }]);
    // another process's registry sees it
    const other = new SkillRegistry({ skillsPath: path.join(root, "skills"), dataDir, projectRoot: root, userStates: new PostgresUserSkillStates(await pool()), cacheMs: 0 });
    expect((await other.list("u1")).find((s) => s.name === "notes")?.enabled).toBe(false);
    await other.setEnabled("notes", true, "u1");
    expect((await registry.list("u1")).find((s) => s.name === "notes")?.enabled).toBe(true);
  });
});
