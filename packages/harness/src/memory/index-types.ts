/**
 * What memory keeps besides `memory.json`, behind one interface: the
 * SQLite file `{base}/memory.db` ({@link SqliteMemoryIndex}) or the
 * `memory_*` tables of PostgreSQL ({@link PgMemoryIndex}) when
 * `database.backend` is `postgres`.
 */
import type { FactUsage } from "./eviction";
import type { MemoryFact, MemoryTriple, ThreadSummary } from "./types";

/** A value now (SQLite answers synchronously) or later (PostgreSQL); callers always await it. */
export type Awaitable<T> = T | Promise<T>;

/** A relevance hit (higher `score` is more relevant). */
export interface ScoredId {
  id: string;
  score: number;
}

/** The fields of a new relation. */
export interface TripleInput {
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  source: string;
}

/**
 * The memory index: full-text search over each scope's facts (re-indexed
 * whenever the scope's document changes) and thread summaries, fact
 * embeddings, recall statistics, knowledge-graph triples and the per-user
 * on/off switch. A scope is `{user}` or `{user}/{agent}`.
 */
export interface MemoryIndex {
  /** Re-index a scope's facts when `signature` differs from what was indexed. Resolves true when it re-indexed. */
  syncFacts(scope: string, signature: string, facts: readonly MemoryFact[]): Awaitable<boolean>;
  /** Relevance hits for `text` among a scope's facts (best first, BM25-like scores). */
  searchFacts(scope: string, text: string, limit?: number): Awaitable<ScoredId[]>;
  /** Record that facts were recalled (access heat for hybrid-v1 eviction). */
  recordAccess(scope: string, ids: readonly string[], when?: string): Awaitable<void>;
  /** Recall statistics of a scope's facts. */
  usage(scope: string): Awaitable<Map<string, FactUsage>>;
  /** Replace a thread's summary (an empty text removes it). */
  putThreadSummary(scope: string, threadId: string, summary: string, when?: string): Awaitable<void>;
  /** Drop a deleted thread's summaries from every scope of its user. */
  deleteThread(userId: string, threadId: string): Awaitable<void>;
  /** Every thread summary of a scope, newest first. */
  threadSummaries(scope: string): Awaitable<ThreadSummary[]>;
  /** Relevance hits for `text` among a scope's thread summaries. */
  searchThreadSummaries(scope: string, text: string, limit?: number): Awaitable<ScoredId[]>;
  /** Store a triple (an identical active one is kept); with `supersede`, same subject+relation, other object are replaced. */
  addTriple(scope: string, t: TripleInput, supersede: boolean, when?: string): Awaitable<string>;
  /** All triples of a scope (superseded ones included), oldest first. */
  triples(scope: string): Awaitable<MemoryTriple[]>;
  /** Active triples touching an entity named in `text` (one hop), best first, deduplicated. */
  recallTriples(scope: string, text: string): Awaitable<MemoryTriple[]>;
  /** Remove everything derived or stored for a scope. */
  clearScope(scope: string): Awaitable<void>;
  /** Stored embeddings of a scope for one model. */
  vectors(scope: string, model: string): Awaitable<Map<string, Float32Array>>;
  /** Content keys of the stored embeddings (to find facts that need one). */
  vectorKeys(scope: string, model: string): Awaitable<Map<string, string>>;
  /** Store embeddings. */
  putVectors(scope: string, model: string, rows: Array<{ id: string; contentKey: string; vec: Float32Array }>): Awaitable<void>;
  /** The per-user switch (default on). */
  userEnabled(userId: string): Awaitable<boolean>;
  /** Turn memory on or off for one user. */
  setUserEnabled(userId: string, enabled: boolean): Awaitable<void>;
  /** Release the index (the PostgreSQL one leaves a shared pool open). */
  close(): Awaitable<void>;
}
