import type pg from "pg";
import type { AgentRow } from "./rows";
import type { AgentRowDb } from "./sql-store";

/** Agent rows on PostgreSQL (`deerflow_agents`, on the process's shared pool; migrated when the store opens). */
export class PostgresAgentRows implements AgentRowDb {
  readonly kind = "postgres" as const;

  constructor(private readonly pool: pg.Pool) {}

  async row(userId: string, name: string): Promise<AgentRow | undefined> {
    const r = await this.pool.query<AgentRow>("SELECT name, config, soul, rev FROM deerflow_agents WHERE user_id = $1 AND name = $2", [userId, name]);
    return r.rows[0];
  }

  async rows(userId: string): Promise<AgentRow[]> {
    return (await this.pool.query<AgentRow>("SELECT name, config, soul, rev FROM deerflow_agents WHERE user_id = $1", [userId])).rows;
  }

  async insert(userId: string, row: AgentRow): Promise<boolean> {
    const r = await this.pool.query(
      "INSERT INTO deerflow_agents (user_id, name, config, soul, rev) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, name) DO NOTHING",
      [userId, row.name, row.config, row.soul, row.rev],
    );
    return r.rowCount === 1;
  }

  async upsert(userId: string, name: string, config: string | null, soul: string | null, rev: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO deerflow_agents (user_id, name, config, soul, rev) VALUES ($1, $2, coalesce($3, '{}'), coalesce($4, ''), $5)
       ON CONFLICT (user_id, name) DO UPDATE SET config = coalesce($3, deerflow_agents.config), soul = coalesce($4, deerflow_agents.soul), rev = $5, updated_at = now()`,
      [userId, name, config, soul, rev],
    );
  }

  async remove(userId: string, name: string): Promise<boolean> {
    return ((await this.pool.query("DELETE FROM deerflow_agents WHERE user_id = $1 AND name = $2", [userId, name])).rowCount ?? 0) > 0;
  }

  async rev(userId: string, name: string): Promise<string> {
    const r = await this.pool.query<{ rev: string }>("SELECT rev FROM deerflow_agents WHERE user_id = $1 AND name = $2", [userId, name]);
    return r.rows[0]?.rev ?? "";
  }

  /** The pool is the process's; the storage closes it. */
  async close(): Promise<void> {}
}
