import type { Migration } from "../postgres";

/** The migration component of the memory index. */
export const MEMORY_COMPONENT = "memory";

/**
 * The memory index on PostgreSQL. The SQLite file has one FTS5 table per
 * scope; here one table holds every scope's facts with a `tsvector` (English
 * stemming, as FTS5's porter tokenizer) and a GIN index, and every query is
 * filtered by scope. `vec_version` in `memory_indexed_scopes` changes with
 * every write of a scope's embeddings, so a process can keep them cached and
 * still see another process's writes.
 */
export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "facts, thread summaries, triples, embeddings, usage, user switch",
    up: `
CREATE TABLE IF NOT EXISTS memory_indexed_scopes (
  scope TEXT PRIMARY KEY,
  signature TEXT NOT NULL,
  fact_count INTEGER NOT NULL DEFAULT 0,
  vec_version BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS memory_facts (
  scope TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  content TEXT NOT NULL,
  tsv TSVECTOR NOT NULL,
  -- tokens as FTS5's unicode61 tokenizer counts them (BM25's document length)
  dl INTEGER NOT NULL,
  -- order of (re-)indexing, FTS5's rowid: equal scores rank in this order on both backends
  ord BIGSERIAL,
  PRIMARY KEY (scope, fact_id)
);
CREATE INDEX IF NOT EXISTS memory_facts_tsv ON memory_facts USING GIN (tsv);
CREATE TABLE IF NOT EXISTS memory_fact_vectors (
  scope TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  model TEXT NOT NULL,
  content_key TEXT NOT NULL,
  vec BYTEA NOT NULL,
  PRIMARY KEY (scope, fact_id)
);
CREATE TABLE IF NOT EXISTS memory_fact_usage (
  scope TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  access_heat DOUBLE PRECISION NOT NULL,
  last_accessed_at TEXT NOT NULL,
  PRIMARY KEY (scope, fact_id)
);
CREATE TABLE IF NOT EXISTS memory_thread_summaries (
  scope TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  summary TEXT NOT NULL,
  tsv TSVECTOR NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (scope, thread_id)
);
CREATE INDEX IF NOT EXISTS memory_thread_summaries_thread ON memory_thread_summaries (thread_id);
CREATE INDEX IF NOT EXISTS memory_thread_summaries_tsv ON memory_thread_summaries USING GIN (tsv);
CREATE TABLE IF NOT EXISTS memory_triples (
  id TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  subject TEXT NOT NULL,
  relation TEXT NOT NULL,
  object TEXT NOT NULL,
  subject_norm TEXT NOT NULL,
  relation_norm TEXT NOT NULL,
  object_norm TEXT NOT NULL,
  confidence DOUBLE PRECISION NOT NULL,
  created_at TEXT NOT NULL,
  source TEXT NOT NULL,
  superseded_by TEXT
);
CREATE INDEX IF NOT EXISTS memory_triples_subject ON memory_triples (scope, subject_norm);
CREATE INDEX IF NOT EXISTS memory_triples_object ON memory_triples (scope, object_norm);
CREATE TABLE IF NOT EXISTS memory_user_settings (
  user_id TEXT PRIMARY KEY,
  enabled BOOLEAN NOT NULL
);`,
  },
];
