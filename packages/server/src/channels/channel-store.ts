import fs from "node:fs";
import path from "node:path";
import { runMigrations } from "@deerflow-ts/harness";
import type { Migration } from "@deerflow-ts/harness";
import Database from "better-sqlite3";
import type { Pool } from "pg";
import { CHANNEL_SCHEMA } from "./channel-schema";

/** Where one inbound message is in its handling. */
export type DeliveryStatus = "received" | "running" | "replying" | "done" | "failed" | "ignored";

/** The idempotency record of one inbound message (keyed by the platform's message id). */
export interface DeliveryRecord {
  channel: string;
  messageId: string;
  chatId: string;
  status: DeliveryStatus;
  /** The process that claimed it. */
  owner: string;
  threadId: string | null;
  runId: string | null;
  /** The platform id of the one reply message, once sent. */
  replyMessageId: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A chat's current thread. */
export interface ChatThread {
  threadId: string;
  userId: string;
}

/** A user's binding of an IM account (DeerFlow's channel connection). */
export interface ChannelConnectionRecord {
  id: string;
  provider: string;
  ownerUserId: string;
  externalAccountId: string;
  externalAccountName: string | null;
  workspaceId: string | null;
  status: "connected" | "revoked";
  createdAt: string;
  updatedAt: string;
}

/** Rows and affected count of one statement. */
interface SqlResult {
  rows: Record<string, unknown>[];
  changes: number;
}

/** SQL with `$n` parameters on either database. */
type Exec = (sql: string, params?: unknown[]) => Promise<SqlResult>;

/**
 * The channel tables: the idempotency records of inbound messages, chat →
 * thread, per-channel cursors (Telegram's update offset), binding codes and
 * connections. SQLite (`{dataDir}/channels.db`) by default; on
 * `database.backend: postgres` the same tables in the shared database, so
 * several server processes see one claim per message.
 */
export class ChannelStore {
  private constructor(
    private readonly exec: Exec,
    private readonly onClose: () => Promise<void>,
    /** `sqlite` or `postgres`. */
    readonly backend: "sqlite" | "postgres",
  ) {}

  /** Open `{dataDir}/channels.db` (created if needed). */
  static openSqlite(dataDir: string): ChannelStore {
    fs.mkdirSync(dataDir, { recursive: true });
    const db = new Database(path.join(dataDir, "channels.db"));
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.exec(CHANNEL_SCHEMA);
    const exec: Exec = async (sql, params = []) => {
      // `$n` → positional `?` in order of appearance (a parameter may be used twice)
      const ordered: unknown[] = [];
      const text = sql.replace(/\$(\d+)/g, (_m, n: string) => {
        ordered.push(params[Number(n) - 1]);
        return "?";
      });
      const stmt = db.prepare(text);
      if (stmt.reader) return { rows: stmt.all(...ordered) as Record<string, unknown>[], changes: 0 };
      return { rows: [], changes: stmt.run(...ordered).changes };
    };
    return new ChannelStore(exec, async () => void (db.open && db.close()), "sqlite");
  }

  /** The channel tables in the server's PostgreSQL database (migrated on open). */
  static async openPostgres(pool: Pool): Promise<ChannelStore> {
    await runMigrations(pool, "channels", CHANNEL_MIGRATIONS);
    const exec: Exec = async (sql, params = []) => {
      const r = await pool.query(sql, params);
      return { rows: r.rows as Record<string, unknown>[], changes: r.rowCount ?? 0 };
    };
    return new ChannelStore(exec, async () => undefined, "postgres");
  }

  /**
   * Claim an inbound message: true when this call recorded it first, false
   * when any process (this one included) had it already — a redelivery.
   */
  async claim(channel: string, messageId: string, chatId: string, owner: string, now: string): Promise<boolean> {
    const r = await this.exec(
      `INSERT INTO channel_deliveries (channel, message_id, chat_id, status, owner, created_at, updated_at)
       VALUES ($1, $2, $3, 'received', $4, $5, $5) ON CONFLICT (channel, message_id) DO NOTHING`,
      [channel, messageId, chatId, owner, now],
    );
    return r.changes > 0;
  }

  async getDelivery(channel: string, messageId: string): Promise<DeliveryRecord | undefined> {
    const r = await this.exec("SELECT * FROM channel_deliveries WHERE channel = $1 AND message_id = $2", [channel, messageId]);
    return r.rows[0] ? delivery(r.rows[0]) : undefined;
  }

  /** Write back what changed of a delivery. */
  async updateDelivery(
    channel: string,
    messageId: string,
    patch: Partial<Pick<DeliveryRecord, "status" | "owner" | "threadId" | "runId" | "replyMessageId" | "error">>,
    now: string,
  ): Promise<void> {
    const cols: Record<string, string> = { status: "status", owner: "owner", threadId: "thread_id", runId: "run_id", replyMessageId: "reply_message_id", error: "error" };
    const sets: string[] = [];
    const params: unknown[] = [channel, messageId, now];
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      params.push(v);
      sets.push(`${cols[k]} = $${params.length}`);
    }
    await this.exec(`UPDATE channel_deliveries SET ${[...sets, "updated_at = $3"].join(", ")} WHERE channel = $1 AND message_id = $2`, params);
  }

  /**
   * Take over a delivery another process left unfinished: true for exactly
   * one caller (compare-and-set on the owner).
   */
  async takeOver(channel: string, messageId: string, from: string, to: string, now: string): Promise<boolean> {
    const r = await this.exec(
      "UPDATE channel_deliveries SET owner = $4, updated_at = $5 WHERE channel = $1 AND message_id = $2 AND owner = $3 AND status IN ('received', 'running', 'replying')",
      [channel, messageId, from, to, now],
    );
    return r.changes > 0;
  }

  /** Deliveries not finished (any owner), oldest first. */
  async unfinished(limit = 100): Promise<DeliveryRecord[]> {
    const r = await this.exec("SELECT * FROM channel_deliveries WHERE status IN ('received', 'running', 'replying') ORDER BY created_at LIMIT $1", [limit]);
    return r.rows.map(delivery);
  }

  /** The newest deliveries (of one channel, or all), for the status page. */
  async recentDeliveries(channel: string | null, limit: number): Promise<DeliveryRecord[]> {
    const r = channel
      ? await this.exec("SELECT * FROM channel_deliveries WHERE channel = $1 ORDER BY updated_at DESC LIMIT $2", [channel, limit])
      : await this.exec("SELECT * FROM channel_deliveries ORDER BY updated_at DESC LIMIT $1", [limit]);
    return r.rows.map(delivery);
  }

  async getChatThread(channel: string, chatKey: string): Promise<ChatThread | undefined> {
    const r = await this.exec("SELECT thread_id, user_id FROM channel_threads WHERE channel = $1 AND chat_key = $2", [channel, chatKey]);
    const row = r.rows[0];
    return row ? { threadId: String(row.thread_id), userId: String(row.user_id) } : undefined;
  }

  async setChatThread(channel: string, chatKey: string, thread: ChatThread, now: string): Promise<void> {
    await this.exec(
      `INSERT INTO channel_threads (channel, chat_key, thread_id, user_id, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (channel, chat_key) DO UPDATE SET thread_id = excluded.thread_id, user_id = excluded.user_id, updated_at = excluded.updated_at`,
      [channel, chatKey, thread.threadId, thread.userId, now],
    );
  }

  async getCursor(channel: string, key: string): Promise<string | undefined> {
    const r = await this.exec("SELECT value FROM channel_cursors WHERE channel = $1 AND name = $2", [channel, key]);
    return r.rows[0] ? String(r.rows[0].value) : undefined;
  }

  async setCursor(channel: string, key: string, value: string): Promise<void> {
    await this.exec(
      "INSERT INTO channel_cursors (channel, name, value) VALUES ($1, $2, $3) ON CONFLICT (channel, name) DO UPDATE SET value = excluded.value",
      [channel, key, value],
    );
  }

  /** Store a one-time binding code. */
  async addConnectCode(code: string, provider: string, ownerUserId: string, expiresAt: number): Promise<void> {
    await this.exec("INSERT INTO channel_connect_codes (code, provider, owner_user_id, expires_at) VALUES ($1, $2, $3, $4)", [code, provider, ownerUserId, expiresAt]);
  }

  async pendingCodes(provider: string, ownerUserId: string, now: number): Promise<number> {
    const r = await this.exec("SELECT COUNT(*) AS n FROM channel_connect_codes WHERE provider = $1 AND owner_user_id = $2 AND expires_at > $3", [provider, ownerUserId, now]);
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Use a binding code once: its owner, or undefined when unknown, expired or used. */
  async consumeConnectCode(code: string, provider: string, now: number): Promise<string | undefined> {
    const r = await this.exec("SELECT owner_user_id, expires_at FROM channel_connect_codes WHERE code = $1 AND provider = $2", [code, provider]);
    const row = r.rows[0];
    if (!row) return undefined;
    const del = await this.exec("DELETE FROM channel_connect_codes WHERE code = $1", [code]);
    if (del.changes === 0 || Number(row.expires_at) <= now) return undefined;
    return String(row.owner_user_id);
  }

  /** Bind an external account to a user (one live binding per account; a rebind moves it). */
  async connect(record: Omit<ChannelConnectionRecord, "status" | "createdAt" | "updatedAt">, now: string): Promise<void> {
    await this.exec("UPDATE channel_connections SET status = 'revoked', updated_at = $3 WHERE provider = $1 AND external_account_id = $2 AND status = 'connected'", [
      record.provider,
      record.externalAccountId,
      now,
    ]);
    await this.exec(
      `INSERT INTO channel_connections (id, provider, owner_user_id, external_account_id, external_account_name, workspace_id, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'connected', $7, $7)`,
      [record.id, record.provider, record.ownerUserId, record.externalAccountId, record.externalAccountName, record.workspaceId, now],
    );
  }

  /** The user bound to an external account, if any. */
  async boundUser(provider: string, externalAccountId: string): Promise<string | undefined> {
    const r = await this.exec("SELECT owner_user_id FROM channel_connections WHERE provider = $1 AND external_account_id = $2 AND status = 'connected'", [provider, externalAccountId]);
    return r.rows[0] ? String(r.rows[0].owner_user_id) : undefined;
  }

  async listConnections(ownerUserId: string): Promise<ChannelConnectionRecord[]> {
    const r = await this.exec("SELECT * FROM channel_connections WHERE owner_user_id = $1 AND status = 'connected' ORDER BY updated_at DESC", [ownerUserId]);
    return r.rows.map(connection);
  }

  /** Revoke one of the user's connections: false when it is not theirs or not live. */
  async disconnect(id: string, ownerUserId: string, now: string): Promise<boolean> {
    const r = await this.exec("UPDATE channel_connections SET status = 'revoked', updated_at = $3 WHERE id = $1 AND owner_user_id = $2 AND status = 'connected'", [id, ownerUserId, now]);
    return r.changes > 0;
  }

  /** Revoke every connection of a provider (its runtime credentials were removed). */
  async disconnectProvider(provider: string, now: string): Promise<void> {
    await this.exec("UPDATE channel_connections SET status = 'revoked', updated_at = $2 WHERE provider = $1 AND status = 'connected'", [provider, now]);
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}

/** The channel tables on PostgreSQL (same columns as channels.db). */
export const CHANNEL_MIGRATIONS: readonly Migration[] = [{ version: 1, name: "deliveries, chat threads, cursors, connect codes, connections", up: CHANNEL_SCHEMA }];

function text(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

function delivery(row: Record<string, unknown>): DeliveryRecord {
  return {
    channel: String(row.channel),
    messageId: String(row.message_id),
    chatId: String(row.chat_id),
    status: String(row.status) as DeliveryStatus,
    owner: String(row.owner),
    threadId: text(row.thread_id),
    runId: text(row.run_id),
    replyMessageId: text(row.reply_message_id),
    error: text(row.error),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}

function connection(row: Record<string, unknown>): ChannelConnectionRecord {
  return {
    id: String(row.id),
    provider: String(row.provider),
    ownerUserId: String(row.owner_user_id),
    externalAccountId: String(row.external_account_id),
    externalAccountName: text(row.external_account_name),
    workspaceId: text(row.workspace_id),
    status: String(row.status) as "connected" | "revoked",
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}
