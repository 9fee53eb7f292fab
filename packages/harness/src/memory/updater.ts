/**
 * Runs one queued update: the part of the conversation not yet extracted
 * (a per-key watermark, advanced only on success, so a failed update is fed
 * again with the next turn), one updater model call, the apply rules, an
 * atomic save, then the tier-2 summary and tier-3 triples. Never throws into
 * a run: failures are logged and reported through {@link MemoryUpdater.status}.
 */
import { humanMessage, systemMessage, contentText } from "../messages";
import { collectModelStream } from "../models";
import type { ChatModel } from "../models";
import { applyMemoryUpdate, effectiveValidDays, selectConsolidationGroups, selectStaleCandidates } from "./apply";
import { modelRefName } from "../config/memory-config";
import type { ResolvedMemoryConfig } from "../config/memory-config";
import { instructionProblem } from "./directives";
import { detectSignals, feedEvidence, formatConversation } from "./message-filter";
import { hasUntrusted } from "./provenance";
import type { MemoryTurn } from "./message-filter";
import type { MemoryQueueItem } from "./queue";
import type { MemoryIndex } from "./index-types";
import { MemoryConflictError, scopeKey } from "./storage";
import type { MemoryFileStorage } from "./storage";
import { buildUpdaterPrompt } from "./updater-prompt";
import { parseMemoryUpdate } from "./update-parse";
import type { MemoryDocument, MemoryScope } from "./types";

/** Where memory reports problems. */
export interface MemoryLogger {
  warn(message: string): void;
  info?(message: string): void;
}

/** Resolves a model name (null = the default chat model) to a model. */
export type MemoryModelResolver = (name: string | null) => ChatModel | Promise<ChatModel>;

/** Health of the updater, for `GET /api/memory/status`. */
export interface UpdaterStatus {
  extractionAvailable: boolean;
  /** Why extraction cannot run (reported once in the log). */
  extractionError: string | null;
  updatesSucceeded: number;
  updatesFailed: number;
  lastError: string | null;
}

/** Callbacks the service gives the updater. */
export interface UpdaterHooks {
  /** Called after a scope's document was saved (re-index, embed). */
  afterSave(scope: MemoryScope, doc: MemoryDocument): Promise<void> | void;
}

const identity = (t: MemoryTurn) => t.id ?? `${t.role}:${t.text}`;

/** Applies queued conversations to memory. */
export class MemoryUpdater {
  private readonly watermarks = new Map<string, string>();
  readonly status: UpdaterStatus = { extractionAvailable: true, extractionError: null, updatesSucceeded: 0, updatesFailed: 0, lastError: null };

  constructor(
    private readonly config: ResolvedMemoryConfig,
    private readonly storage: MemoryFileStorage,
    private readonly index: MemoryIndex,
    private readonly resolveModel: MemoryModelResolver | undefined,
    private readonly logger: MemoryLogger,
    private readonly hooks: UpdaterHooks,
  ) {}

  private feedAfterWatermark(key: string, turns: MemoryTurn[]): MemoryTurn[] {
    const last = this.watermarks.get(key);
    if (last === undefined) return turns;
    const i = turns.findIndex((t) => identity(t) === last);
    // The watermarked turn is gone (summarization removed the front): feed everything again, never skip.
    return i === -1 ? turns : turns.slice(i + 1);
  }

  private setWatermark(key: string, turn: MemoryTurn): void {
    this.watermarks.delete(key);
    this.watermarks.set(key, identity(turn));
    const cap = this.config.backend.watermark_max_keys;
    if (cap > 0 && this.watermarks.size > cap) this.watermarks.delete(this.watermarks.keys().next().value!);
  }

  private async model(): Promise<ChatModel | null> {
    const name = modelRefName(this.config.backend.model);
    try {
      if (!this.resolveModel) throw new Error("no model resolver was given to the memory service");
      const m = await this.resolveModel(name);
      this.status.extractionAvailable = true;
      this.status.extractionError = null;
      return m;
    } catch (err) {
      const reason = `memory extraction cannot run: model ${name ? `'${name}'` : "(default chat model)"} is unavailable: ${err instanceof Error ? err.message : String(err)}`;
      if (this.status.extractionError !== reason) this.logger.warn(reason);
      this.status.extractionAvailable = false;
      this.status.extractionError = reason;
      return null;
    }
  }

  /** Process one queued item. Resolves true when memory was updated (or nothing was new). */
  async run(item: MemoryQueueItem): Promise<boolean> {
    const key = `${item.threadId}\u0000${item.userId}\u0000${item.agentName ?? ""}`;
    const feed = this.feedAfterWatermark(key, item.turns);
    if (!feed.length) return true;
    const scope: MemoryScope = { userId: item.userId, agentName: item.agentName };
    try {
      const model = await this.model();
      if (!model) return this.fail("extraction unavailable");
      const signals = detectSignals(feed);
      const cfg = this.config.backend;
      let current = this.storage.load(scope);
      const stale = cfg.staleness_review_enabled ? selectStaleCandidates(current, cfg) : [];
      const prompt = buildUpdaterPrompt({
        memory: current,
        conversation: formatConversation(feed),
        signals,
        staleCandidates: stale.length >= cfg.staleness_min_candidates ? stale : [],
        consolidationGroups: cfg.consolidation_enabled ? selectConsolidationGroups(current, cfg) : [],
        maxConsolidationGroups: cfg.consolidation_max_groups_per_cycle,
        validDays: (f) => effectiveValidDays(f, cfg),
      });
      const temperature = typeof cfg.model === "object" && cfg.model?.temperature != null ? cfg.model.temperature : undefined;
      const answer = await collectModelStream(model.stream({ messages: [systemMessage(prompt.system), humanMessage(prompt.user)], tools: [], settings: temperature !== undefined ? { temperature } : {} }));
      const update = parseMemoryUpdate(contentText(answer.content));
      // The whole thread as queued, not just the new turns: the assistant's words in a later turn may repeat a page
      // or a document it read earlier, and a fact resting on them rests on that page.
      const evidence = feedEvidence(item.turns);
      const untrusted = hasUntrusted(evidence);
      let saved: MemoryDocument | null = null;
      for (let attempt = 0; attempt < 3 && !saved; attempt++) {
        const usage = cfg.fact_eviction_policy === "hybrid-v1" ? await this.index.usage(scopeKey(scope)) : undefined;
        const result = applyMemoryUpdate(current, update, { cfg, threadId: item.threadId, signals, usage, evidence });
        try {
          saved = this.storage.save(scope, result.doc, current.revision);
        } catch (err) {
          if (!(err instanceof MemoryConflictError) || attempt === 2) throw err;
          current = this.storage.load(scope);
        }
      }
      const sk = scopeKey(scope);
      // Recalled summaries and relations are injected too: from a turn with tool output or uploads they may not instruct.
      const instructs = (text: string) => untrusted && instructionProblem(text, evidence.userText) !== null;
      if (cfg.thread_summaries_enabled && update.threadSummary && !instructs(update.threadSummary)) await this.index.putThreadSummary(sk, item.threadId, update.threadSummary);
      if (cfg.knowledge_graph_enabled) {
        for (const r of update.relations.filter((t) => !instructs(`${t.subject} ${t.relation} ${t.object}`))) await this.index.addTriple(sk, { ...r, source: item.threadId }, r.correction || signals.has("correction"));
      }
      await this.hooks.afterSave(scope, saved!);
      this.setWatermark(key, item.turns[item.turns.length - 1]);
      this.status.updatesSucceeded++;
      return true;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.logger.warn(`memory update for thread ${item.threadId} failed (retried with the next turn): ${msg}`);
      return this.fail(msg);
    }
  }

  private fail(reason: string): false {
    this.status.updatesFailed++;
    this.status.lastError = reason;
    return false;
  }
}
