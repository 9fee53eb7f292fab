/**
 * The channel tables, one text for SQLite and PostgreSQL: ISO-8601 text
 * times (they sort the same on both), expiry instants in epoch ms.
 */
export const CHANNEL_SCHEMA = `
CREATE TABLE IF NOT EXISTS channel_deliveries (
  channel TEXT NOT NULL,
  message_id TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  status TEXT NOT NULL,
  owner TEXT NOT NULL,
  thread_id TEXT,
  run_id TEXT,
  reply_message_id TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (channel, message_id)
);
CREATE INDEX IF NOT EXISTS channel_deliveries_status ON channel_deliveries (status, created_at);
CREATE TABLE IF NOT EXISTS channel_threads (
  channel TEXT NOT NULL,
  chat_key TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (channel, chat_key)
);
CREATE TABLE IF NOT EXISTS channel_cursors (
  channel TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (channel, name)
);
CREATE TABLE IF NOT EXISTS channel_connect_codes (
  code TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  owner_user_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS channel_connections (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  owner_user_id TEXT NOT NULL,
  external_account_id TEXT NOT NULL,
  external_account_name TEXT,
  workspace_id TEXT,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS channel_connections_owner ON channel_connections (owner_user_id, status);
`;
