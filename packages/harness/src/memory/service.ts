/**
 * `MemoryService`: the one object a host builds for long-term memory. It owns
 * the `memory.json` storage, the index (SQLite, or PostgreSQL with
 * `database.backend: postgres`), the update queue and the
 * updater; gives DynamicContext its `provider`; takes finished conversations
 * through `enqueue` (the Memory middleware calls it); serves the HTTP API's
 * operations; and must be `flush`ed/`close`d before the process exits.
 */
import path from "node:path";
import type pg from "pg";
import type { MemoryInjection, MemoryProvider, MemoryRequest } from "../middlewares/dynamic-context";
import type { Message } from "../messages";
import { factContentKey, newFactId } from "./apply";
import { resolveMemoryConfig } from "../config/memory-config";
import type { ResolvedMemoryConfig } from "../config/memory-config";
import { createEmbedder } from "./embeddings";
import type { EmbeddingModelEntry, MemoryEmbedder } from "./embeddings";
import { selectForCapacity } from "./eviction";
import type { MemoryIndex } from "./index-types";
import { openMemoryIndex } from "./open-index";
import type { MemoryDatabase } from "./open-index";
import { leastTrusted } from "./provenance";
import type { FactProvenance } from "./provenance";
import { formatMemoryInjection } from "./injection";
import type { InjectionOutput } from "./injection";
import { detectSignals, filterMessagesForMemory, filterTrivial } from "./message-filter";
import { MemoryQueueFullError, MemoryUpdateQueue } from "./queue";
import { recallFor } from "./recall";
import { MemoryFileStorage, normalizeFact, scopeKey } from "./storage";
import type { MemoryFileOps } from "./storage";
import { emptyMemoryDocument } from "./types";
import type { MemoryDocument, MemoryFact, MemoryScope, MemoryTriple, ThreadSummary } from "./types";
import { MemoryUpdater } from "./updater";
import type { MemoryLogger, MemoryModelResolver, UpdaterStatus } from "./updater";
import { DeerFlowError } from "../errors";

/** A fact operation was given bad input (HTTP 400) or hit a duplicate (409). */
export class MemoryFactError extends DeerFlowError {
  constructor(code: "memory_fact_invalid" | "memory_fact_duplicate" | "memory_fact_not_found" | "memory_fact_evicted", message: string) {
    super(code, message);
  }
}

/** Options of {@link MemoryService}. */
export interface MemoryServiceOptions {
  /** The `memory:` config section (raw or already resolved). */
  config: unknown;
  /** The harness data dir; memory lives under it unless `storage_path` is set. */
  dataDir: string;
  /** Resolves `backend_config.model` (null = the default chat model). */
  resolveModel?: MemoryModelResolver;
  logger?: MemoryLogger;
  /** An embedder (tests); else built from `backend_config.embedding` when set. */
  embedder?: MemoryEmbedder | null;
  /** `models:` entries, to resolve `backend_config.embedding` by name. */
  models?: readonly EmbeddingModelEntry[];
  /** File operations (tests simulate crashes). */
  fileOps?: MemoryFileOps;
  /** `database:` of the config: with `backend: postgres` the index lives in PostgreSQL (no `memory.db`). */
  database?: MemoryDatabase | null;
  /** The process's PostgreSQL pool (the runtime's storage pool) for the index to share. */
  pgPool?: pg.Pool;
  /** An index to use instead of the configured one (tests). */
  index?: MemoryIndex;
}

/** What `enqueue` did. */
export interface EnqueueResult {
  queued: boolean;
  /** Why not: `disabled`, `tool_mode`, `user_disabled`, `empty`, `trivial`, `queue_full`. */
  reason?: string;
  signals: string[];
}

/** Fields of a manual fact. */
export interface FactInput {
  content: string;
  category?: string;
  confidence?: number;
  /** Who the fact rests on (default the user's; `memory_add` in a run that read tool output passes `tool` / `upload`). */
  provenance?: FactProvenance;
}

function isResolved(c: unknown): c is ResolvedMemoryConfig {
  return !!c && typeof c === "object" && "backend" in c && "rawBackendConfig" in c;
}

/** Long-term memory for one harness. */
export class MemoryService {
  readonly config: ResolvedMemoryConfig;
  readonly storage: MemoryFileStorage;
  readonly index: MemoryIndex;
  readonly embedder: MemoryEmbedder | null;
  /** DynamicContext's memory slot. */
  readonly provider: MemoryProvider;
  private readonly queue: MemoryUpdateQueue;
  private readonly updater: MemoryUpdater;
  private readonly logger: MemoryLogger;
  private readonly indexedDocs = new WeakSet<MemoryDocument>();
  private readonly embedJobs = new Set<Promise<void>>();
  private enqueueChain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(options: MemoryServiceOptions) {
    this.config = isResolved(options.config) ? options.config : resolveMemoryConfig(options.config);
    this.logger = options.logger ?? { warn: (m) => console.warn(`[deerflow:memory] ${m}`) };
    const b = this.config.backend;
    const base = b.storage_path ? path.resolve(options.dataDir, b.storage_path) : options.dataDir;
    this.storage = new MemoryFileStorage(base, options.fileOps);
    this.index = options.index ?? openMemoryIndex({ base, database: options.database, pgPool: options.pgPool, log: (m) => this.logger.warn(m) });
    this.embedder = options.embedder !== undefined ? options.embedder : b.embedding ? createEmbedder(b.embedding, options.models) : null;
    this.updater = new MemoryUpdater(this.config, this.storage, this.index, options.resolveModel, this.logger, { afterSave: (scope, doc) => this.afterSave(scope, doc) });
    this.queue = new MemoryUpdateQueue({
      debounceMs: b.debounce_seconds * 1000,
      maxDepth: b.queue_max_depth,
      process: (item) => this.updater.run(item),
      onError: (err) => this.logger.warn(`memory update failed: ${err instanceof Error ? err.message : String(err)}`),
    });
    this.provider = (userId, agentName, request) => this.provide({ userId, agentName }, request);
  }

  /** Updater health and queue depth. */
  get updaterStatus(): UpdaterStatus & { pending: number; processing: boolean } {
    return { ...this.updater.status, pending: this.queue.pending, processing: this.queue.processing };
  }

  // ── Runs ──────────────────────────────────────────────────────────────

  /**
   * Queue a finished run's conversation for the updater. Enqueues are
   * chained, so they reach the queue in call order even when the per-user
   * switch is read from a database, and `flush` waits for those under way.
   */
  enqueue(input: { threadId: string; userId?: string | null; agentName?: string | null; messages: readonly Message[] }): Promise<EnqueueResult> {
    const job = this.enqueueChain.then(() => this.enqueueNow(input));
    this.enqueueChain = job.then(
      () => undefined,
      () => undefined,
    );
    return job;
  }

  private async enqueueNow(input: { threadId: string; userId?: string | null; agentName?: string | null; messages: readonly Message[] }): Promise<EnqueueResult> {
    const userId = input.userId || "default";
    const none = (reason: string): EnqueueResult => ({ queued: false, reason, signals: [] });
    if (this.closed || !this.config.enabled) return none("disabled");
    if (this.config.mode === "tool") return none("tool_mode");
    try {
      if (!(await this.isUserEnabled(userId))) return none("user_disabled");
    } catch (err) {
      // an unreachable index must not fail the run that finished: this turn is not learnt
      this.logger.warn(`memory: could not read the switch of user ${userId}: ${err instanceof Error ? err.message : String(err)}`);
      return none("index_unavailable");
    }
    const filtered = filterMessagesForMemory(input.messages);
    if (!filtered.length) return none("empty");
    const turns = filterTrivial(filtered);
    if (!turns.length) return none("trivial");
    const signals = detectSignals(turns);
    try {
      this.queue.add({ threadId: input.threadId, userId, agentName: input.agentName ?? null, turns, signals });
    } catch (err) {
      if (err instanceof MemoryQueueFullError) {
        this.logger.warn(err.message);
        return { queued: false, reason: "queue_full", signals: [...signals] };
      }
      throw err;
    }
    return { queued: true, signals: [...signals] };
  }

  /** Run every pending update now and wait (process exit, tests). */
  async flush(): Promise<void> {
    await this.enqueueChain;
    await this.queue.flush();
    while (this.embedJobs.size) await Promise.all([...this.embedJobs]);
  }

  /** Flush within `shutdown_flush_timeout_seconds`, then release the index. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.enqueueChain;
    const ok = await this.queue.close(this.config.shutdown_flush_timeout_seconds * 1000);
    if (!ok) this.logger.warn(`memory: pending updates were not finished within ${this.config.shutdown_flush_timeout_seconds}s at shutdown`);
    await Promise.allSettled([...this.embedJobs]);
    this.closed = true;
    await this.index.close();
  }

  // ── Injection ─────────────────────────────────────────────────────────

  private async ensureIndexed(scope: MemoryScope, doc: MemoryDocument): Promise<void> {
    if (this.indexedDocs.has(doc)) return;
    const sig = `${doc.revision}:${doc.lastUpdated}:${doc.facts.length}`;
    await this.index.syncFacts(scopeKey(scope), sig, doc.facts);
    this.indexedDocs.add(doc);
    this.scheduleEmbedding(scope, doc);
  }

  private async afterSave(scope: MemoryScope, doc: MemoryDocument): Promise<void> {
    await this.ensureIndexed(scope, doc);
  }

  private scheduleEmbedding(scope: MemoryScope, doc: MemoryDocument): void {
    const embedder = this.embedder;
    if (!embedder || !doc.facts.length) return;
    const sk = scopeKey(scope);
    const job = (async () => {
      try {
        const have = await this.index.vectorKeys(sk, embedder.model);
        const missing = doc.facts.filter((f) => have.get(f.id) !== factContentKey(f.content));
        if (!missing.length) return;
        const vecs = await embedder.embed(missing.map((f) => f.content));
        if (this.closed) return;
        await this.index.putVectors(sk, embedder.model, missing.map((f, i) => ({ id: f.id, contentKey: factContentKey(f.content), vec: vecs[i] })));
      } catch (err) {
        this.logger.warn(`memory: embedding facts failed (lexical ranking still works): ${err instanceof Error ? err.message : String(err)}`);
      }
    })();
    this.embedJobs.add(job);
    void job.finally(() => this.embedJobs.delete(job));
  }

  /**
   * The `<memory>` block for a question (without the wrapper) and what it holds.
   * Ranked by relevance to `query` when the index is on; by confidence otherwise.
   */
  async recall(scope: MemoryScope, query: string, options: { threadId?: string | null; signal?: AbortSignal } = {}): Promise<InjectionOutput> {
    const doc = this.storage.load(scope);
    const b = this.config.backend;
    const includeFacts = this.config.mode !== "tool";
    const relevance = b.retrieval_adapter === "fts5";
    let recall = { relevantFactIds: [] as string[], triples: [] as MemoryTriple[], threadSummaries: [] as ThreadSummary[] };
    if (relevance && query.trim()) {
      await this.ensureIndexed(scope, doc);
      let queryVector: Float32Array | null = null;
      if (this.embedder && includeFacts) {
        try {
          [queryVector] = await this.embedder.embed([query], options.signal);
        } catch (err) {
          this.logger.warn(`memory: query embedding failed, ranking lexically: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      recall = await recallFor({ index: this.index, scope: scopeKey(scope), doc, query, threadId: options.threadId, embedder: this.embedder, queryVector, graph: b.knowledge_graph_enabled, threads: b.thread_summaries_enabled });
    }
    const out = formatMemoryInjection({ doc, cfg: b, relevantFactIds: includeFacts ? recall.relevantFactIds : [], triples: recall.triples, threadSummaries: recall.threadSummaries, includeFacts });
    if (out.report.factIds.length && b.fact_eviction_policy === "hybrid-v1") await this.index.recordAccess(scopeKey(scope), out.report.factIds);
    return out;
  }

  private async provide(scope: MemoryScope, request?: MemoryRequest): Promise<MemoryInjection | null> {
    if (this.closed || !this.config.enabled || !this.config.injection_enabled) return null;
    try {
      if (!(await this.isUserEnabled(scope.userId))) return null;
      const out = await this.recall(scope, request?.query ?? "", { threadId: request?.threadId });
      if (!out.text) return null;
      return { text: `<memory>\n${out.text}\n</memory>`, report: out.report };
    } catch (err) {
      // A broken memory file must not break the run: inject nothing this turn.
      this.logger.warn(`memory: could not load memory for user ${scope.userId}: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  }

  // ── Per-user switch ───────────────────────────────────────────────────

  /** Whether memory is on for a user (default on). */
  async isUserEnabled(userId: string): Promise<boolean> {
    return this.index.userEnabled(userId);
  }

  /** Turn memory on or off for a user: off = nothing injected, nothing learnt. */
  async setUserEnabled(userId: string, enabled: boolean): Promise<void> {
    await this.index.setUserEnabled(userId, enabled);
  }

  // ── Management API (DeerFlow's MemoryManager operations) ────────────────

  /** The scope's document. */
  getMemory(scope: MemoryScope): MemoryDocument {
    return structuredClone(this.storage.load(scope));
  }

  /** Re-read the file (after an external edit). */
  reloadMemory(scope: MemoryScope): MemoryDocument {
    this.storage.invalidate(scope);
    return this.getMemory(scope);
  }

  /** Delete everything remembered for the scope (facts, summaries, thread summaries, relations). */
  async clearMemory(scope: MemoryScope): Promise<MemoryDocument> {
    const current = this.storage.load(scope);
    const doc = this.storage.save(scope, { ...emptyMemoryDocument(), revision: current.revision }, current.revision);
    await this.index.clearScope(scopeKey(scope));
    await this.ensureIndexed(scope, doc);
    return structuredClone(doc);
  }

  /** Replace the scope's memory with an exported document (facts are validated; the capacity policy applies). */
  async importMemory(scope: MemoryScope, data: unknown): Promise<MemoryDocument> {
    const r = (data && typeof data === "object" ? data : {}) as Record<string, any>;
    const doc = emptyMemoryDocument();
    for (const k of Object.keys(doc.user) as Array<keyof MemoryDocument["user"]>) if (typeof r.user?.[k]?.summary === "string") doc.user[k] = { summary: r.user[k].summary, updatedAt: String(r.user[k].updatedAt ?? "") };
    for (const k of Object.keys(doc.history) as Array<keyof MemoryDocument["history"]>) if (typeof r.history?.[k]?.summary === "string") doc.history[k] = { summary: r.history[k].summary, updatedAt: String(r.history[k].updatedAt ?? "") };
    const seen = new Set<string>();
    const facts: MemoryFact[] = [];
    for (const raw of Array.isArray(r.facts) ? r.facts : []) {
      const f = normalizeFact(raw && typeof raw === "object" && !(raw as any).id ? { ...raw, id: newFactId() } : raw);
      if (!f || seen.has(factContentKey(f.content)) || seen.has(f.id)) continue;
      seen.add(factContentKey(f.content));
      seen.add(f.id);
      facts.push({ ...f, source: f.source || "import", createdAt: f.createdAt || new Date().toISOString() });
    }
    doc.facts = selectForCapacity(facts, this.config.backend).kept;
    const current = this.storage.load(scope);
    const saved = this.storage.save(scope, doc, current.revision);
    await this.ensureIndexed(scope, saved);
    return structuredClone(saved);
  }

  /** The document for download. */
  exportMemory(scope: MemoryScope): MemoryDocument {
    return this.getMemory(scope);
  }

  private async mutate(scope: MemoryScope, fn: (doc: MemoryDocument) => MemoryDocument): Promise<MemoryDocument> {
    const current = this.storage.load(scope);
    const saved = this.storage.save(scope, fn(structuredClone(current)), current.revision);
    await this.ensureIndexed(scope, saved);
    return structuredClone(saved);
  }

  /**
   * Add a fact by hand (source `manual`).
   * @throws MemoryFactError on empty content, a bad confidence, a duplicate, or when the capacity policy evicts it.
   */
  async createFact(scope: MemoryScope, input: FactInput): Promise<{ memory: MemoryDocument; factId: string }> {
    const content = (input.content ?? "").trim();
    if (!content) throw new MemoryFactError("memory_fact_invalid", "Memory fact content cannot be empty.");
    const confidence = input.confidence ?? 0.5;
    if (!Number.isFinite(confidence) || confidence < 0 || confidence > 1) throw new MemoryFactError("memory_fact_invalid", "Invalid confidence value; must be between 0 and 1.");
    const key = factContentKey(content);
    const id = newFactId();
    const memory = await this.mutate(scope, (doc) => {
      if (doc.facts.some((f) => factContentKey(f.content) === key)) throw new MemoryFactError("memory_fact_duplicate", "A fact with the same content already exists.");
      const fact: MemoryFact = { id, content, category: input.category?.trim() || "context", confidence, createdAt: new Date().toISOString(), source: "manual", ...(input.provenance && input.provenance !== "user" ? { provenance: input.provenance } : {}) };
      const kept = selectForCapacity([...doc.facts, fact], this.config.backend).kept;
      if (!kept.some((f) => f.id === id)) throw new MemoryFactError("memory_fact_evicted", "Fact was not stored because the configured memory.max_facts capacity policy evicted it");
      return { ...doc, facts: kept };
    });
    return { memory, factId: id };
  }

  /**
   * Change a fact; omitted fields keep their values.
   * @throws MemoryFactError (not found, invalid, duplicate).
   */
  async updateFact(scope: MemoryScope, factId: string, patch: Partial<FactInput>): Promise<MemoryDocument> {
    if (patch.confidence !== undefined && (!Number.isFinite(patch.confidence) || patch.confidence < 0 || patch.confidence > 1)) throw new MemoryFactError("memory_fact_invalid", "Invalid confidence value; must be between 0 and 1.");
    if (patch.content !== undefined && !patch.content.trim()) throw new MemoryFactError("memory_fact_invalid", "Memory fact content cannot be empty.");
    return this.mutate(scope, (doc) => {
      const i = doc.facts.findIndex((f) => f.id === factId);
      if (i === -1) throw new MemoryFactError("memory_fact_not_found", `Memory fact '${factId}' not found.`);
      if (patch.content !== undefined) {
        const key = factContentKey(patch.content);
        if (doc.facts.some((f) => f.id !== factId && factContentKey(f.content) === key)) throw new MemoryFactError("memory_fact_duplicate", "A fact with the same content already exists.");
      }
      const f = doc.facts[i];
      const provenance = patch.provenance ? leastTrusted(f.provenance === "tool" || f.provenance === "upload" ? f.provenance : "user", patch.provenance) : undefined;
      doc.facts[i] = { ...f, content: patch.content?.trim() ?? f.content, category: patch.category?.trim() || f.category, confidence: patch.confidence ?? f.confidence, updatedAt: new Date().toISOString(), ...(provenance && provenance !== "user" ? { provenance } : {}) };
      return doc;
    });
  }

  /**
   * Remove a fact.
   * @throws MemoryFactError when there is no such fact.
   */
  async deleteFact(scope: MemoryScope, factId: string): Promise<MemoryDocument> {
    return this.mutate(scope, (doc) => {
      if (!doc.facts.some((f) => f.id === factId)) throw new MemoryFactError("memory_fact_not_found", `Memory fact '${factId}' not found.`);
      return { ...doc, facts: doc.facts.filter((f) => f.id !== factId) };
    });
  }

  /** Facts matching a query, most relevant first (the `memory_search` tool). */
  async search(scope: MemoryScope, query: string, options: { limit?: number; category?: string | null } = {}): Promise<MemoryFact[]> {
    const doc = this.storage.load(scope);
    await this.ensureIndexed(scope, doc);
    const byId = new Map(doc.facts.map((f) => [f.id, f]));
    let hits = (await this.index.searchFacts(scopeKey(scope), query)).flatMap((h) => (byId.has(h.id) ? [byId.get(h.id)!] : []));
    if (!hits.length && query.trim()) {
      // Words too common for BM25 ("the", "user"): fall back to a substring match.
      const q = query.trim().toLowerCase();
      hits = doc.facts.filter((f) => f.content.toLowerCase().includes(q));
    }
    if (options.category) hits = hits.filter((f) => f.category === options.category);
    return hits.slice(0, options.limit ?? 10).map((f) => structuredClone(f));
  }

  /** A thread was deleted: drop its pending update and forget its summary (facts learnt from it stay, as in DeerFlow). */
  async forgetThread(threadId: string, userId: string): Promise<void> {
    if (this.closed) return;
    this.queue.dropThread(threadId, userId || "default");
    await this.index.deleteThread(userId || "default", threadId);
  }

  /** Relations stored for a scope (superseded ones included). */
  async relations(scope: MemoryScope): Promise<MemoryTriple[]> {
    return this.index.triples(scopeKey(scope));
  }

  /** Thread summaries stored for a scope, newest first. */
  async threadSummaries(scope: MemoryScope): Promise<ThreadSummary[]> {
    return this.index.threadSummaries(scopeKey(scope));
  }

  /** `GET /api/memory/config`. */
  configResponse(): { enabled: boolean; mode: "middleware" | "tool"; injection_enabled: boolean; shutdown_flush_timeout_seconds: number; manager_class: string; backend_config: Record<string, unknown> } {
    const c = this.config;
    const backend = { ...c.backend, model: c.backend.model, embedding: c.backend.embedding };
    // API keys never leave the server.
    for (const k of ["model", "embedding"] as const) {
      const v = backend[k];
      if (v && typeof v === "object" && "api_key" in v) backend[k] = { ...v, api_key: v.api_key ? "***" : v.api_key };
    }
    return { enabled: c.enabled, mode: c.mode, injection_enabled: c.injection_enabled, shutdown_flush_timeout_seconds: c.shutdown_flush_timeout_seconds, manager_class: c.manager_class, backend_config: backend };
  }
}
