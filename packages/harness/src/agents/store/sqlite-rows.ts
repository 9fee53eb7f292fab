import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { AgentRow } from "./rows";
import type { AgentRowDb } from "./sql-store";

/**
 * The `agents` table in the gateway's SQLite file (`{dataDir}/gateway.db`),
 * beside threads and runs. `(user_id, name)` is the primary key, so of two
 * processes creating one name the second insert fails on the key.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS agents (
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  config TEXT NOT NULL,
  soul TEXT NOT NULL,
  rev TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (user_id, name)
)`;

/** Agent rows on SQLite: better-sqlite3 answers synchronously, so the change token needs no await. */
export class SqliteAgentRows implements AgentRowDb {
  readonly kind = "sqlite" as const;
  private readonly db: Database.Database;
  private readonly byKey: Database.Statement<[string, string], AgentRow>;
  private readonly byUser: Database.Statement<[string], AgentRow>;
  private readonly insertRow: Database.Statement;
  private readonly upsertRow: Database.Statement;
  private readonly removeRow: Database.Statement<[string, string]>;
  private readonly revOf: Database.Statement<[string, string], { rev: string }>;

  constructor(file: string) {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    // another process (or this one's run stores) may hold the write lock for a moment
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.byKey = this.db.prepare("SELECT name, config, soul, rev FROM agents WHERE user_id = ? AND name = ?");
    this.byUser = this.db.prepare("SELECT name, config, soul, rev FROM agents WHERE user_id = ?");
    this.insertRow = this.db.prepare(
      "INSERT INTO agents (user_id, name, config, soul, rev, created_at, updated_at) VALUES (@user, @name, @config, @soul, @rev, @now, @now) ON CONFLICT (user_id, name) DO NOTHING",
    );
    this.upsertRow = this.db.prepare(
      `INSERT INTO agents (user_id, name, config, soul, rev, created_at, updated_at)
       VALUES (@user, @name, coalesce(@config, '{}'), coalesce(@soul, ''), @rev, @now, @now)
       ON CONFLICT (user_id, name) DO UPDATE SET config = coalesce(@config, config), soul = coalesce(@soul, soul), rev = excluded.rev, updated_at = excluded.updated_at`,
    );
    this.removeRow = this.db.prepare("DELETE FROM agents WHERE user_id = ? AND name = ?");
    this.revOf = this.db.prepare("SELECT rev FROM agents WHERE user_id = ? AND name = ?");
  }

  async row(userId: string, name: string): Promise<AgentRow | undefined> {
    return this.byKey.get(userId, name);
  }

  async rows(userId: string): Promise<AgentRow[]> {
    return this.byUser.all(userId);
  }

  async insert(userId: string, row: AgentRow): Promise<boolean> {
    return this.insertRow.run({ user: userId, ...row, now: new Date().toISOString() }).changes === 1;
  }

  async upsert(userId: string, name: string, config: string | null, soul: string | null, rev: string): Promise<void> {
    this.upsertRow.run({ user: userId, name, config, soul, rev, now: new Date().toISOString() });
  }

  async remove(userId: string, name: string): Promise<boolean> {
    return this.removeRow.run(userId, name).changes > 0;
  }

  rev(userId: string, name: string): string {
    return this.revOf.get(userId, name)?.rev ?? "";
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
