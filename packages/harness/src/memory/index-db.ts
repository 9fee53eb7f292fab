/**
 * The SQLite memory index: one file (`{base}/memory.db`) with an FTS5 table
 * per scope over fact contents (BM25 relevance), fact embeddings (hybrid ranking), recall
 * statistics (hybrid-v1 eviction), thread summaries (tier 2, also FTS5),
 * knowledge-graph triples (tier 3) and the per-user on/off switch. Facts are
 * derived from `memory.json` and re-indexed whenever a scope's document
 * changes; summaries, triples and settings live only here.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { createHash, randomBytes } from "node:crypto";
import { contentWords, ftsQuery, normalizeEntity } from "./query-terms";
import type { FactUsage } from "./eviction";
import type { MemoryIndex, ScoredId, TripleInput } from "./index-types";
import type { MemoryFact, MemoryTriple, ThreadSummary } from "./types";

export type { MemoryIndex, ScoredId } from "./index-types";

/** Sibling of a memory base dir where the SQLite index lives. */
export const MEMORY_DB_FILE = "memory.db";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS indexed_scopes (scope TEXT PRIMARY KEY, signature TEXT NOT NULL, fact_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS fact_vectors (scope TEXT NOT NULL, fact_id TEXT NOT NULL, model TEXT NOT NULL, content_key TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (scope, fact_id));
CREATE TABLE IF NOT EXISTS fact_usage (scope TEXT NOT NULL, fact_id TEXT NOT NULL, access_heat REAL NOT NULL, last_accessed_at TEXT NOT NULL, PRIMARY KEY (scope, fact_id));
CREATE TABLE IF NOT EXISTS thread_summaries (scope TEXT NOT NULL, thread_id TEXT NOT NULL, summary TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (scope, thread_id));
CREATE VIRTUAL TABLE IF NOT EXISTS summaries_fts USING fts5(summary, scope UNINDEXED, thread_id UNINDEXED, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS triples (id TEXT PRIMARY KEY, scope TEXT NOT NULL, subject TEXT NOT NULL, relation TEXT NOT NULL, object TEXT NOT NULL,
  subject_norm TEXT NOT NULL, relation_norm TEXT NOT NULL, object_norm TEXT NOT NULL, confidence REAL NOT NULL, created_at TEXT NOT NULL, source TEXT NOT NULL, superseded_by TEXT);
CREATE INDEX IF NOT EXISTS triples_subject ON triples (scope, subject_norm);
CREATE INDEX IF NOT EXISTS triples_object ON triples (scope, object_norm);
CREATE TABLE IF NOT EXISTS user_settings (user_id TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
`;

function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function fromBlob(b: Buffer): Float32Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

interface TripleRow {
  id: string;
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  created_at: string;
  source: string;
  superseded_by: string | null;
}

/** Prepared statements of one scope's fact table. */
interface FactTable {
  name: string;
  clear: Database.Statement;
  insert: Database.Statement;
  rows: Database.Statement;
  remove: Database.Statement;
  count: Database.Statement;
  search: Database.Statement;
}

/** A quoted FTS5 phrase (user text can never become FTS syntax). */
const phrase = (w: string) => `"${w.replace(/"/g, '""')}"`;

const rowToTriple = (r: TripleRow): MemoryTriple => ({ id: r.id, subject: r.subject, relation: r.relation, object: r.object, confidence: r.confidence, createdAt: r.created_at, source: r.source, supersededBy: r.superseded_by });

/** The SQLite side of memory (synchronous: every method answers at once). */
export class SqliteMemoryIndex implements MemoryIndex {
  readonly db: Database.Database;
  private readonly entityCache = new Map<string, string[]>();
  private readonly factTables = new Map<string, FactTable>();
  private readonly factCounts = new Map<string, number>();
  private readonly vectorCache = new Map<string, Map<string, Float32Array>>();
  private readonly stmts;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(SCHEMA);
    this.stmts = {
      signature: this.db.prepare<[string], { signature: string; fact_count: number }>("SELECT signature, fact_count FROM indexed_scopes WHERE scope = ?"),
      setSignature: this.db.prepare("INSERT INTO indexed_scopes (scope, signature, fact_count) VALUES (?, ?, ?) ON CONFLICT(scope) DO UPDATE SET signature = excluded.signature, fact_count = excluded.fact_count"),
      searchSummaries: this.db.prepare<[string, string, number], { thread_id: string; s: number }>("SELECT thread_id, bm25(summaries_fts) AS s FROM summaries_fts WHERE summaries_fts MATCH ? AND scope = ? ORDER BY s LIMIT ?"),
      upsertSummary: this.db.prepare("INSERT INTO thread_summaries (scope, thread_id, summary, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(scope, thread_id) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at"),
      deleteSummaryFts: this.db.prepare("DELETE FROM summaries_fts WHERE scope = ? AND thread_id = ?"),
      insertSummaryFts: this.db.prepare("INSERT INTO summaries_fts (summary, scope, thread_id) VALUES (?, ?, ?)"),
      getSummaries: this.db.prepare<[string], { thread_id: string; summary: string; updated_at: string }>("SELECT thread_id, summary, updated_at FROM thread_summaries WHERE scope = ? ORDER BY updated_at DESC"),
      insertTriple: this.db.prepare(
        "INSERT INTO triples (id, scope, subject, relation, object, subject_norm, relation_norm, object_norm, confidence, created_at, source, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
      ),
      activeSameEdge: this.db.prepare<[string, string, string, string], { id: string; object_norm: string }>(
        "SELECT id, object_norm FROM triples WHERE scope = ? AND subject_norm = ? AND relation_norm = ? AND superseded_by IS NULL AND object_norm <> ?",
      ),
      exactActive: this.db.prepare<[string, string, string, string], { id: string }>("SELECT id FROM triples WHERE scope = ? AND subject_norm = ? AND relation_norm = ? AND object_norm = ? AND superseded_by IS NULL"),
      supersede: this.db.prepare("UPDATE triples SET superseded_by = ? WHERE id = ?"),
      entities: this.db.prepare<[string, string], { e: string }>("SELECT subject_norm AS e FROM triples WHERE scope = ? AND superseded_by IS NULL UNION SELECT object_norm FROM triples WHERE scope = ? AND superseded_by IS NULL"),
      oneHop: this.db.prepare<[string, string, string], TripleRow>("SELECT * FROM triples WHERE scope = ? AND superseded_by IS NULL AND (subject_norm = ? OR object_norm = ?) ORDER BY confidence DESC, created_at DESC"),
      allTriples: this.db.prepare<[string], TripleRow>("SELECT * FROM triples WHERE scope = ? ORDER BY created_at"),
      vectors: this.db.prepare<[string, string], { fact_id: string; content_key: string; vec: Buffer }>("SELECT fact_id, content_key, vec FROM fact_vectors WHERE scope = ? AND model = ?"),
      putVector: this.db.prepare("INSERT INTO fact_vectors (scope, fact_id, model, content_key, vec) VALUES (?, ?, ?, ?, ?) ON CONFLICT(scope, fact_id) DO UPDATE SET model = excluded.model, content_key = excluded.content_key, vec = excluded.vec"),
      deleteVectorsNotIn: this.db.prepare("DELETE FROM fact_vectors WHERE scope = ? AND fact_id NOT IN (SELECT value FROM json_each(?))"),
      bumpUsage: this.db.prepare(
        "INSERT INTO fact_usage (scope, fact_id, access_heat, last_accessed_at) VALUES (?, ?, 1, ?) ON CONFLICT(scope, fact_id) DO UPDATE SET access_heat = access_heat + 1, last_accessed_at = excluded.last_accessed_at",
      ),
      usage: this.db.prepare<[string], { fact_id: string; access_heat: number; last_accessed_at: string }>("SELECT fact_id, access_heat, last_accessed_at FROM fact_usage WHERE scope = ?"),
      getEnabled: this.db.prepare<[string], { enabled: number }>("SELECT enabled FROM user_settings WHERE user_id = ?"),
      setEnabled: this.db.prepare("INSERT INTO user_settings (user_id, enabled) VALUES (?, ?) ON CONFLICT(user_id) DO UPDATE SET enabled = excluded.enabled"),
    };
  }

  /**
   * Each scope has its own FTS5 table, so a query never scans other users'
   * facts and BM25 statistics are per scope.
   */
  private factTable(scope: string, create: boolean): FactTable | null {
    let t = this.factTables.get(scope);
    if (t) return t;
    const name = `facts_fts_${createHash("sha1").update(scope).digest("hex").slice(0, 16)}`;
    const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name);
    if (!exists && !create) return null;
    if (!exists) this.db.exec(`CREATE VIRTUAL TABLE ${name} USING fts5(content, fact_id UNINDEXED, tokenize='porter unicode61')`);
    t = {
      name,
      clear: this.db.prepare(`DELETE FROM ${name}`),
      insert: this.db.prepare(`INSERT INTO ${name} (content, fact_id) VALUES (?, ?)`),
      rows: this.db.prepare(`SELECT rowid, fact_id, content FROM ${name}`),
      remove: this.db.prepare(`DELETE FROM ${name} WHERE rowid = ?`),
      count: this.db.prepare(`SELECT count(*) AS n FROM ${name} WHERE ${name} MATCH ?`),
      search: this.db.prepare(`SELECT fact_id, content, bm25(${name}) AS s FROM ${name} WHERE ${name} MATCH ? ORDER BY s LIMIT ?`),
    };
    this.factTables.set(scope, t);
    return t;
  }

  /** Re-index a scope's facts when `signature` differs from what was indexed. Returns true when it re-indexed. */
  syncFacts(scope: string, signature: string, facts: readonly MemoryFact[]): boolean {
    const row = this.stmts.signature.get(scope);
    const table = this.factTable(scope, true)!;
    if (row?.signature === signature) {
      this.factCounts.set(scope, row.fact_count);
      return false;
    }
    this.db.transaction(() => {
      // Incremental: an update usually adds or removes a handful of facts among thousands.
      const indexed = new Map((table.rows.all() as Array<{ rowid: number; fact_id: string; content: string }>).map((r) => [r.fact_id, r]));
      for (const f of facts) {
        const old = indexed.get(f.id);
        if (old && old.content === f.content) {
          indexed.delete(f.id);
          continue;
        }
        table.insert.run(f.content, f.id);
      }
      for (const stale of indexed.values()) table.remove.run(stale.rowid);
      this.stmts.deleteVectorsNotIn.run(scope, JSON.stringify(facts.map((f) => f.id)));
      this.stmts.setSignature.run(scope, signature, facts.length);
    })();
    this.factCounts.set(scope, facts.length);
    this.vectorCache.delete(scope);
    return true;
  }

  /**
   * BM25 hits for `text` among a scope's facts (best first). Words found in
   * more than 2% of the facts ("manager" among thousands of facts about
   * managers) barely discriminate but make FTS5 score every fact that has
   * them, so candidates come from the rarer words and the common ones only
   * add their IDF to candidates that contain them. With only common words,
   * facts containing all of them are searched first, then any of them.
   */
  searchFacts(scope: string, text: string, limit = 200): ScoredId[] {
    const table = this.factTable(scope, false);
    const words = contentWords(text);
    if (!table || !words.length) return [];
    const n = this.factCounts.get(scope) ?? this.stmts.signature.get(scope)?.fact_count ?? 0;
    const df = words.map((w) => (table.count.get(phrase(w)) as { n: number }).n);
    const cap = Math.max(50, n * 0.02);
    const present = words.map((w, i) => ({ w, df: df[i] })).filter((x) => x.df > 0);
    if (!present.length) return [];
    const rare = present.filter((x) => x.df <= cap);
    const common = rare.length ? present.filter((x) => x.df > cap) : [];
    let rows: Array<{ fact_id: string; content: string; s: number }> = [];
    if (!rare.length && present.length > 1) {
      // Only common words: facts having all of them first (an intersection, cheap), the union only if none does.
      rows = table.search.all(present.map((x) => phrase(x.w)).join(" AND "), limit) as typeof rows;
    }
    if (!rows.length) rows = table.search.all((rare.length ? rare : present).map((x) => phrase(x.w)).join(" OR "), limit) as typeof rows;
    return rows.map((r) => {
      let score = -r.s;
      if (common.length) {
        const lc = ` ${r.content.toLowerCase()}`;
        for (const c of common) if (lc.includes(` ${c.w.slice(0, Math.max(3, c.w.length - 2))}`)) score += Math.log(1 + (n - c.df + 0.5) / (c.df + 0.5));
      }
      return { id: r.fact_id, score };
    });
  }

  /** Record that facts were recalled (access heat for hybrid-v1 eviction). */
  recordAccess(scope: string, ids: readonly string[], when = new Date().toISOString()): void {
    if (!ids.length) return;
    this.db.transaction(() => {
      for (const id of ids) this.stmts.bumpUsage.run(scope, id, when);
    })();
  }

  /** Recall statistics of a scope's facts. */
  usage(scope: string): Map<string, FactUsage> {
    return new Map(this.stmts.usage.all(scope).map((r) => [r.fact_id, { accessHeat: r.access_heat, lastAccessedAt: r.last_accessed_at }]));
  }

  /** Replace a thread's summary (an empty text removes it). */
  putThreadSummary(scope: string, threadId: string, summary: string, when = new Date().toISOString()): void {
    this.db.transaction(() => {
      this.stmts.deleteSummaryFts.run(scope, threadId);
      if (!summary) {
        this.db.prepare("DELETE FROM thread_summaries WHERE scope = ? AND thread_id = ?").run(scope, threadId);
        return;
      }
      this.stmts.upsertSummary.run(scope, threadId, summary, when);
      this.stmts.insertSummaryFts.run(summary, scope, threadId);
    })();
  }

  /** Drop a deleted thread's summaries from every scope of its user. */
  deleteThread(userId: string, threadId: string): void {
    this.db.transaction(() => {
      for (const t of ["thread_summaries", "summaries_fts"]) this.db.prepare(`DELETE FROM ${t} WHERE thread_id = ? AND (scope = ? OR scope LIKE ?)`).run(threadId, userId, `${userId}/%`);
    })();
  }

  /** Every thread summary of a scope, newest first. */
  threadSummaries(scope: string): ThreadSummary[] {
    return this.stmts.getSummaries.all(scope).map((r) => ({ threadId: r.thread_id, summary: r.summary, updatedAt: r.updated_at }));
  }

  /** BM25 hits for `text` among a scope's thread summaries. */
  searchThreadSummaries(scope: string, text: string, limit = 20): ScoredId[] {
    const q = ftsQuery(text);
    if (!q) return [];
    return this.stmts.searchSummaries.all(q, scope, limit).map((r) => ({ id: r.thread_id, score: -r.s }));
  }

  /**
   * Store a triple. An identical active triple is kept as is. With
   * `supersede`, active triples with the same subject and relation but another
   * object are marked as replaced by the new one.
   */
  addTriple(scope: string, t: TripleInput, supersede: boolean, when = new Date().toISOString()): string {
    const s = normalizeEntity(t.subject);
    const r = normalizeEntity(t.relation);
    const o = normalizeEntity(t.object);
    const same = this.stmts.exactActive.get(scope, s, r, o);
    if (same) return same.id;
    const id = `rel_${randomBytes(4).toString("hex")}`;
    this.db.transaction(() => {
      this.stmts.insertTriple.run(id, scope, t.subject, t.relation, t.object, s, r, o, t.confidence, when, t.source);
      if (supersede) for (const old of this.stmts.activeSameEdge.all(scope, s, r, o)) this.stmts.supersede.run(id, old.id);
    })();
    this.entityCache.delete(scope);
    return id;
  }

  /** All triples of a scope (superseded ones included), oldest first. */
  triples(scope: string): MemoryTriple[] {
    return this.stmts.allTriples.all(scope).map(rowToTriple);
  }

  /** Active triples touching an entity named in `text` (one hop), best first, deduplicated. */
  recallTriples(scope: string, text: string): MemoryTriple[] {
    let entities = this.entityCache.get(scope);
    if (!entities) {
      entities = this.stmts.entities.all(scope, scope).map((r) => r.e).filter((e) => e && e !== "user");
      this.entityCache.set(scope, entities);
    }
    if (!entities.length) return [];
    const q = ` ${normalizeEntity(text)} `;
    const named = entities.filter((e) => q.includes(` ${e} `));
    const seen = new Set<string>();
    const out: MemoryTriple[] = [];
    for (const e of named) {
      for (const row of this.stmts.oneHop.all(scope, e, e)) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        out.push(rowToTriple(row));
      }
    }
    return out;
  }

  /** Remove everything derived or stored for a scope (clear). */
  clearScope(scope: string): void {
    this.db.transaction(() => {
      for (const t of ["summaries_fts", "thread_summaries", "triples", "fact_vectors", "fact_usage", "indexed_scopes"]) this.db.prepare(`DELETE FROM ${t} WHERE scope = ?`).run(scope);
      this.factTable(scope, false)?.clear.run();
    })();
    this.factCounts.delete(scope);
    this.entityCache.delete(scope);
    this.vectorCache.delete(scope);
  }

  /** Stored embeddings of a scope for one model (cached). */
  vectors(scope: string, model: string): Map<string, Float32Array> {
    let m = this.vectorCache.get(scope);
    if (!m) {
      m = new Map(this.stmts.vectors.all(scope, model).map((r) => [r.fact_id, fromBlob(r.vec)]));
      this.vectorCache.set(scope, m);
    }
    return m;
  }

  /** Content keys of the stored embeddings (to find facts that need one). */
  vectorKeys(scope: string, model: string): Map<string, string> {
    return new Map(this.stmts.vectors.all(scope, model).map((r) => [r.fact_id, r.content_key]));
  }

  /** Store embeddings. */
  putVectors(scope: string, model: string, rows: Array<{ id: string; contentKey: string; vec: Float32Array }>): void {
    this.db.transaction(() => {
      for (const r of rows) this.stmts.putVector.run(scope, r.id, model, r.contentKey, toBlob(r.vec));
    })();
    this.vectorCache.delete(scope);
  }

  /** The per-user switch (default on). */
  userEnabled(userId: string): boolean {
    return (this.stmts.getEnabled.get(userId)?.enabled ?? 1) === 1;
  }

  /** Turn memory on or off for one user. */
  setUserEnabled(userId: string, enabled: boolean): void {
    this.stmts.setEnabled.run(userId, enabled ? 1 : 0);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
