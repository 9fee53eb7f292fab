/**
 * The memory index on PostgreSQL (`database.backend: postgres`): the same
 * operations as the SQLite file, on the `memory_*` tables shared by every
 * process on the database. Full text is a `tsvector` with English stemming;
 * fact relevance is BM25 computed in SQL from the same ingredients FTS5 uses
 * (per-word document frequency, the scope's fact count and average length),
 * so both backends rank the same facts first.
 */
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { runMigrations } from "../postgres";
import type { FactUsage } from "./eviction";
import { MEMORY_COMPONENT, MEMORY_MIGRATIONS } from "./index-pg-schema";
import type { MemoryIndex, ScoredId, TripleInput } from "./index-types";
import { contentWords, normalizeEntity } from "./query-terms";
import type { MemoryFact, MemoryTriple, ThreadSummary } from "./types";

/** BM25's usual constants (FTS5's defaults). */
const K1 = 1.2;
const B = 0.75;

interface TripleRow {
  id: string;
  subject: string;
  relation: string;
  object: string;
  subject_norm: string;
  object_norm: string;
  confidence: number;
  created_at: string;
  source: string;
  superseded_by: string | null;
}

const rowToTriple = (r: TripleRow): MemoryTriple => ({ id: r.id, subject: r.subject, relation: r.relation, object: r.object, confidence: Number(r.confidence), createdAt: r.created_at, source: r.source, supersededBy: r.superseded_by });

function toBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function fromBytes(b: Buffer): Float32Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

/** `a || b || …` (or `&&`) of one `plainto_tsquery` per word, numbered from `$first` (user text stays a parameter). */
function tsQuery(count: number, first: number, op: "||" | "&&"): string {
  return Array.from({ length: count }, (_, i) => `plainto_tsquery('english', $${first + i})`).join(` ${op} `);
}

/** Tokens of `text` as FTS5's unicode61 tokenizer splits it (letters and digits; everything else separates). */
const tokenCount = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean).length;

/** `LIKE` pattern text matching `s` literally. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    const out = await fn(c);
    await c.query("COMMIT");
    return out;
  } catch (err) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/** How {@link PgMemoryIndex} reaches its database. */
export interface PgMemoryIndexOptions {
  /** The process's shared pool, or how to open one (called on first use). */
  pool: pg.Pool | (() => Promise<pg.Pool>);
  /** End the pool on close (true when the index opened it). */
  ownsPool?: boolean;
}

/** The PostgreSQL side of memory. */
export class PgMemoryIndex implements MemoryIndex {
  private readonly source: pg.Pool | (() => Promise<pg.Pool>);
  private readonly ownsPool: boolean;
  private opened?: Promise<pg.Pool>;
  private ready?: Promise<pg.Pool>;
  private closed = false;
  /** Embeddings per scope, valid while the scope's `vec_version` is unchanged (any process's write bumps it). */
  private readonly vectorCache = new Map<string, { version: string; model: string; vectors: Map<string, Float32Array> }>();

  constructor(options: PgMemoryIndexOptions) {
    this.source = options.pool;
    this.ownsPool = options.ownsPool ?? false;
  }

  /** The pool once the `memory` migrations ran (a failed attempt is retried by the next call). */
  private db(): Promise<pg.Pool> {
    if (this.closed) return Promise.reject(new Error("The memory index is closed."));
    this.ready ??= (async () => {
      const source = this.source;
      this.opened ??= typeof source === "function" ? source() : Promise.resolve(source);
      const pool = await this.opened.catch((err: unknown) => {
        this.opened = undefined;
        throw err;
      });
      await runMigrations(pool, MEMORY_COMPONENT, MEMORY_MIGRATIONS);
      return pool;
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  async syncFacts(scope: string, signature: string, facts: readonly MemoryFact[]): Promise<boolean> {
    const pool = await this.db();
    const cur = await pool.query<{ signature: string }>("SELECT signature FROM memory_indexed_scopes WHERE scope = $1", [scope]);
    if (cur.rows[0]?.signature === signature) return false;
    const byId = new Map(facts.map((f) => [f.id, f.content]));
    await inTransaction(pool, async (c) => {
      // One re-index of a scope at a time across processes: the scope's row is locked first.
      await c.query("INSERT INTO memory_indexed_scopes (scope, signature, fact_count) VALUES ($1, '', 0) ON CONFLICT DO NOTHING", [scope]);
      const locked = await c.query<{ signature: string }>("SELECT signature FROM memory_indexed_scopes WHERE scope = $1 FOR UPDATE", [scope]);
      if (locked.rows[0]?.signature === signature) return;
      // Incremental: an update usually adds or removes a handful of facts among thousands.
      const have = await c.query<{ fact_id: string; content: string }>("SELECT fact_id, content FROM memory_facts WHERE scope = $1", [scope]);
      const indexed = new Map(have.rows.map((r) => [r.fact_id, r.content]));
      const changed = [...byId].filter(([id, content]) => indexed.get(id) !== content);
      if (changed.length) {
        await c.query(
          `INSERT INTO memory_facts (scope, fact_id, content, tsv, dl)
           SELECT $1, u.id, u.content, to_tsvector('english', u.content), u.dl FROM unnest($2::text[], $3::text[], $4::int[]) AS u(id, content, dl)
           ON CONFLICT (scope, fact_id) DO UPDATE SET content = excluded.content, tsv = excluded.tsv, dl = excluded.dl, ord = DEFAULT`,
          [scope, changed.map(([id]) => id), changed.map(([, content]) => content), changed.map(([, content]) => tokenCount(content))],
        );
      }
      const keep = [...byId.keys()];
      if ([...indexed.keys()].some((id) => !byId.has(id))) await c.query("DELETE FROM memory_facts WHERE scope = $1 AND NOT (fact_id = ANY($2::text[]))", [scope, keep]);
      await c.query("DELETE FROM memory_fact_vectors WHERE scope = $1 AND NOT (fact_id = ANY($2::text[]))", [scope, keep]);
      await c.query("UPDATE memory_indexed_scopes SET signature = $2, fact_count = $3, vec_version = vec_version + 1 WHERE scope = $1", [scope, signature, byId.size]);
    });
    this.vectorCache.delete(scope);
    return true;
  }

  /**
   * BM25 hits, chosen as the SQLite index chooses them: words found in more
   * than 2% of the facts only add their IDF to candidates found through the
   * rarer words; with only common words, facts having all of them first.
   */
  async searchFacts(scope: string, text: string, limit = 200): Promise<ScoredId[]> {
    const words = contentWords(text);
    if (!words.length) return [];
    const pool = await this.db();
    const stats = await pool.query<{ word: string; df: number; n: number; avgdl: number }>(
      `WITH s AS (SELECT count(*)::int AS n, coalesce(avg(dl), 1)::float8 AS avgdl FROM memory_facts WHERE scope = $1)
       SELECT w.word, (SELECT count(*) FROM memory_facts f WHERE f.scope = $1 AND f.tsv @@ plainto_tsquery('english', w.word))::int AS df, s.n, s.avgdl
       FROM unnest($2::text[]) WITH ORDINALITY AS w(word, i), s ORDER BY w.i`,
      [scope, words],
    );
    const n = stats.rows[0]?.n ?? 0;
    const avgdl = Math.max(1, stats.rows[0]?.avgdl ?? 1);
    const present = stats.rows.filter((r) => r.df > 0).map((r) => ({ w: r.word, df: r.df }));
    if (!present.length) return [];
    const cap = Math.max(50, n * 0.02);
    const rare = present.filter((x) => x.df <= cap);
    const common = rare.length ? present.filter((x) => x.df > cap) : [];
    const idf = (df: number) => Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));
    const search = async (terms: typeof present, op: "||" | "&&") => {
      const r = await pool.query<{ fact_id: string; content: string; s: number }>(
        `SELECT f.fact_id, f.content,
           (SELECT coalesce(sum(q.idf), 0) FROM unnest($2::text[], $3::float8[]) AS q(word, idf) WHERE f.tsv @@ plainto_tsquery('english', q.word))
             * ${K1 + 1} / (1 + ${K1} * (${1 - B} + ${B} * f.dl / $4::float8)) AS s
         FROM memory_facts f WHERE f.scope = $1 AND f.tsv @@ (${tsQuery(terms.length, 6, op)})
         ORDER BY s DESC, f.ord LIMIT $5`,
        [scope, terms.map((t) => t.w), terms.map((t) => idf(t.df)), avgdl, limit, ...terms.map((t) => t.w)],
      );
      return r.rows;
    };
    let rows: Array<{ fact_id: string; content: string; s: number }> = [];
    if (!rare.length && present.length > 1) rows = await search(present, "&&");
    if (!rows.length) rows = await search(rare.length ? rare : present, "||");
    return rows.map((r) => {
      let score = Number(r.s);
      if (common.length) {
        const lc = ` ${r.content.toLowerCase()}`;
        for (const c of common) if (lc.includes(` ${c.w.slice(0, Math.max(3, c.w.length - 2))}`)) score += Math.log(1 + (n - c.df + 0.5) / (c.df + 0.5));
      }
      return { id: r.fact_id, score };
    });
  }

  async recordAccess(scope: string, ids: readonly string[], when = new Date().toISOString()): Promise<void> {
    if (!ids.length) return;
    await (await this.db()).query(
      `INSERT INTO memory_fact_usage (scope, fact_id, access_heat, last_accessed_at)
       SELECT $1, id, count(*), $3 FROM unnest($2::text[]) AS id GROUP BY id
       ON CONFLICT (scope, fact_id) DO UPDATE SET access_heat = memory_fact_usage.access_heat + excluded.access_heat, last_accessed_at = excluded.last_accessed_at`,
      [scope, [...ids], when],
    );
  }

  async usage(scope: string): Promise<Map<string, FactUsage>> {
    const r = await (await this.db()).query<{ fact_id: string; access_heat: number; last_accessed_at: string }>("SELECT fact_id, access_heat, last_accessed_at FROM memory_fact_usage WHERE scope = $1", [scope]);
    return new Map(r.rows.map((row) => [row.fact_id, { accessHeat: Number(row.access_heat), lastAccessedAt: row.last_accessed_at }]));
  }

  async putThreadSummary(scope: string, threadId: string, summary: string, when = new Date().toISOString()): Promise<void> {
    const pool = await this.db();
    if (!summary) {
      await pool.query("DELETE FROM memory_thread_summaries WHERE scope = $1 AND thread_id = $2", [scope, threadId]);
      return;
    }
    await pool.query(
      `INSERT INTO memory_thread_summaries (scope, thread_id, summary, tsv, updated_at) VALUES ($1, $2, $3, to_tsvector('english', $3), $4)
       ON CONFLICT (scope, thread_id) DO UPDATE SET summary = excluded.summary, tsv = excluded.tsv, updated_at = excluded.updated_at`,
      [scope, threadId, summary, when],
    );
  }

  async deleteThread(userId: string, threadId: string): Promise<void> {
    await (await this.db()).query("DELETE FROM memory_thread_summaries WHERE thread_id = $1 AND (scope = $2 OR scope LIKE $3)", [threadId, userId, `${likeLiteral(userId)}/%`]);
  }

  async threadSummaries(scope: string): Promise<ThreadSummary[]> {
    const r = await (await this.db()).query<{ thread_id: string; summary: string; updated_at: string }>("SELECT thread_id, summary, updated_at FROM memory_thread_summaries WHERE scope = $1 ORDER BY updated_at DESC", [scope]);
    return r.rows.map((row) => ({ threadId: row.thread_id, summary: row.summary, updatedAt: row.updated_at }));
  }

  async searchThreadSummaries(scope: string, text: string, limit = 20): Promise<ScoredId[]> {
    const words = contentWords(text);
    if (!words.length) return [];
    const r = await (await this.db()).query<{ thread_id: string; s: number }>(
      `SELECT t.thread_id, ts_rank(t.tsv, q.q) AS s FROM memory_thread_summaries t, (SELECT ${tsQuery(words.length, 3, "||")} AS q) q
       WHERE t.scope = $1 AND t.tsv @@ q.q ORDER BY s DESC, t.updated_at DESC LIMIT $2`,
      [scope, limit, ...words],
    );
    return r.rows.map((row) => ({ id: row.thread_id, score: Number(row.s) }));
  }

  async addTriple(scope: string, t: TripleInput, supersede: boolean, when = new Date().toISOString()): Promise<string> {
    const s = normalizeEntity(t.subject);
    const r = normalizeEntity(t.relation);
    const o = normalizeEntity(t.object);
    return inTransaction(await this.db(), async (c) => {
      const same = await c.query<{ id: string }>("SELECT id FROM memory_triples WHERE scope = $1 AND subject_norm = $2 AND relation_norm = $3 AND object_norm = $4 AND superseded_by IS NULL", [scope, s, r, o]);
      if (same.rows[0]) return same.rows[0].id;
      const id = `rel_${randomBytes(4).toString("hex")}`;
      await c.query(
        "INSERT INTO memory_triples (id, scope, subject, relation, object, subject_norm, relation_norm, object_norm, confidence, created_at, source, superseded_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)",
        [id, scope, t.subject, t.relation, t.object, s, r, o, t.confidence, when, t.source],
      );
      if (supersede) await c.query("UPDATE memory_triples SET superseded_by = $1 WHERE scope = $2 AND subject_norm = $3 AND relation_norm = $4 AND superseded_by IS NULL AND object_norm <> $5", [id, scope, s, r, o]);
      return id;
    });
  }

  async triples(scope: string): Promise<MemoryTriple[]> {
    const r = await (await this.db()).query<TripleRow>("SELECT * FROM memory_triples WHERE scope = $1 ORDER BY created_at, id", [scope]);
    return r.rows.map(rowToTriple);
  }

  async recallTriples(scope: string, text: string): Promise<MemoryTriple[]> {
    const pool = await this.db();
    const ents = await pool.query<{ e: string }>(
      "SELECT subject_norm AS e FROM memory_triples WHERE scope = $1 AND superseded_by IS NULL UNION SELECT object_norm FROM memory_triples WHERE scope = $1 AND superseded_by IS NULL",
      [scope],
    );
    const q = ` ${normalizeEntity(text)} `;
    const named = ents.rows.map((row) => row.e).filter((e) => e && e !== "user" && q.includes(` ${e} `));
    if (!named.length) return [];
    const r = await pool.query<TripleRow>(
      "SELECT * FROM memory_triples WHERE scope = $1 AND superseded_by IS NULL AND (subject_norm = ANY($2::text[]) OR object_norm = ANY($2::text[])) ORDER BY confidence DESC, created_at DESC",
      [scope, named],
    );
    // Grouped by the entity named, as the SQLite index answers (one hop per entity, in order).
    const seen = new Set<string>();
    const out: MemoryTriple[] = [];
    for (const e of named) {
      for (const row of r.rows) {
        if ((row.subject_norm !== e && row.object_norm !== e) || seen.has(row.id)) continue;
        seen.add(row.id);
        out.push(rowToTriple(row));
      }
    }
    return out;
  }

  async clearScope(scope: string): Promise<void> {
    await inTransaction(await this.db(), async (c) => {
      for (const t of ["memory_thread_summaries", "memory_triples", "memory_fact_vectors", "memory_fact_usage", "memory_facts", "memory_indexed_scopes"]) await c.query(`DELETE FROM ${t} WHERE scope = $1`, [scope]);
    });
    this.vectorCache.delete(scope);
  }

  async vectors(scope: string, model: string): Promise<Map<string, Float32Array>> {
    const pool = await this.db();
    const v = await pool.query<{ vec_version: string }>("SELECT vec_version FROM memory_indexed_scopes WHERE scope = $1", [scope]);
    const version = String(v.rows[0]?.vec_version ?? "0");
    const cached = this.vectorCache.get(scope);
    if (cached && cached.version === version && cached.model === model) return cached.vectors;
    const r = await pool.query<{ fact_id: string; vec: Buffer }>("SELECT fact_id, vec FROM memory_fact_vectors WHERE scope = $1 AND model = $2", [scope, model]);
    const vectors = new Map(r.rows.map((row) => [row.fact_id, fromBytes(row.vec)]));
    this.vectorCache.set(scope, { version, model, vectors });
    return vectors;
  }

  async vectorKeys(scope: string, model: string): Promise<Map<string, string>> {
    const r = await (await this.db()).query<{ fact_id: string; content_key: string }>("SELECT fact_id, content_key FROM memory_fact_vectors WHERE scope = $1 AND model = $2", [scope, model]);
    return new Map(r.rows.map((row) => [row.fact_id, row.content_key]));
  }

  async putVectors(scope: string, model: string, rows: Array<{ id: string; contentKey: string; vec: Float32Array }>): Promise<void> {
    if (!rows.length) return;
    const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
    await inTransaction(await this.db(), async (c) => {
      await c.query(
        `INSERT INTO memory_fact_vectors (scope, fact_id, model, content_key, vec)
         SELECT $1, u.id, $2, u.key, u.vec FROM unnest($3::text[], $4::text[], $5::bytea[]) AS u(id, key, vec)
         ON CONFLICT (scope, fact_id) DO UPDATE SET model = excluded.model, content_key = excluded.content_key, vec = excluded.vec`,
        [scope, model, unique.map((r) => r.id), unique.map((r) => r.contentKey), unique.map((r) => toBytes(r.vec))],
      );
      await c.query(
        "INSERT INTO memory_indexed_scopes (scope, signature, fact_count, vec_version) VALUES ($1, '', 0, 1) ON CONFLICT (scope) DO UPDATE SET vec_version = memory_indexed_scopes.vec_version + 1",
        [scope],
      );
    });
    this.vectorCache.delete(scope);
  }

  async userEnabled(userId: string): Promise<boolean> {
    const r = await (await this.db()).query<{ enabled: boolean }>("SELECT enabled FROM memory_user_settings WHERE user_id = $1", [userId]);
    return r.rows[0]?.enabled ?? true;
  }

  async setUserEnabled(userId: string, enabled: boolean): Promise<void> {
    await (await this.db()).query("INSERT INTO memory_user_settings (user_id, enabled) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled", [userId, enabled]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const opened = this.opened;
    if (this.ownsPool && opened) await (await opened.catch(() => undefined))?.end();
  }
}
