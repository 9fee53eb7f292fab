import type pg from "pg";
import { runMigrations } from "../postgres/migrate";
import { SKILL_STATES_COMPONENT, SKILL_STATES_MIGRATIONS } from "./skill-state-pg-schema";
import type { SkillStates, UserSkillStateStore } from "./skill-state";

/**
 * Users' skill states on PostgreSQL (`database.backend: postgres`), shared
 * by every process on the database. Each toggle is one row upsert (each
 * delete one row delete): no read-modify-write of a whole document, so two
 * processes toggling different skills of one user at once both keep theirs.
 * The table is migrated on first use (a failed attempt is retried by the next call).
 */
export class PostgresUserSkillStates implements UserSkillStateStore {
  private ready?: Promise<pg.Pool>;

  constructor(private readonly pool: pg.Pool) {}

  private db(): Promise<pg.Pool> {
    this.ready ??= runMigrations(this.pool, SKILL_STATES_COMPONENT, SKILL_STATES_MIGRATIONS).then(
      () => this.pool,
      (err: unknown) => {
        this.ready = undefined;
        throw err;
      },
    );
    return this.ready;
  }

  async get(userId: string): Promise<SkillStates> {
    const rows = (await (await this.db()).query<{ skill_name: string; enabled: boolean }>("SELECT skill_name, enabled FROM deerflow_skill_states WHERE user_id = $1", [userId])).rows;
    const out: SkillStates = {};
    for (const r of rows) out[r.skill_name] = { enabled: r.enabled };
    return out;
  }

  async set(userId: string, name: string, enabled: boolean): Promise<void> {
    await (await this.db()).query(
      `INSERT INTO deerflow_skill_states (user_id, skill_name, enabled) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, skill_name) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
      [userId, name, enabled],
    );
  }

  async drop(userId: string, name: string): Promise<void> {
    await (await this.db()).query("DELETE FROM deerflow_skill_states WHERE user_id = $1 AND skill_name = $2", [userId, name]);
  }
}
