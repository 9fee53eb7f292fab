/**
 * Applying an updater answer to a memory document, deterministically: the
 * model proposes, these rules decide. Facts must be user-scoped, durable and
 * descriptive and reach the confidence threshold; duplicates (same content
 * ignoring case and surrounding space) are skipped; removals need a user-scope
 * reason and a surviving replacement when they name one; staleness decisions
 * apply only to real candidates and never to protected categories
 * (corrections); the capacity policy runs last. With the feed's evidence,
 * each new fact gets its provenance (see `provenance.ts`), and facts,
 * summaries and consolidations resting on tool output or uploads that read as
 * instructions to the agent (see `directives.ts`) are dropped.
 */
import { randomBytes } from "node:crypto";
import type { MemoryBackendConfig } from "../config/memory-config";
import { selectForCapacity } from "./eviction";
import type { FactUsage } from "./eviction";
import { instructionProblem } from "./directives";
import type { MemorySignal } from "./message-filter";
import { factProvenance, leastTrusted, ProvenanceJudge } from "./provenance";
import type { FactProvenance, FeedEvidence } from "./provenance";
import type { MemoryUpdate, NewFactUpdate, SectionUpdate } from "./update-parse";
import { HISTORY_SECTIONS, USER_SECTIONS } from "./types";
import type { MemoryDocument, MemoryFact } from "./types";

const DAY_MS = 86_400_000;

/** A new fact id. */
export function newFactId(): string {
  return `fact_${randomBytes(4).toString("hex")}`;
}

/** The dedupe key of a fact's content. */
export function factContentKey(content: string): string {
  return content.trim().replace(/\s+/g, " ").toLowerCase();
}

/** Why the gate rejected a proposal (counted for logs and tests). */
export interface GateRejections {
  facts: number;
  summaries: number;
  removals: number;
  lowConfidence: number;
  /** Facts / summaries resting on tool output or uploads that were instructions to the agent. */
  untrustedInstructions: number;
}

/** Options of {@link applyMemoryUpdate}. */
export interface ApplyOptions {
  cfg: MemoryBackendConfig;
  threadId: string | null;
  signals: ReadonlySet<MemorySignal>;
  now?: Date;
  usage?: Map<string, FactUsage>;
  /** The feed's user words and tool / upload contents; absent = every fact is the user's (as before). */
  evidence?: FeedEvidence;
}

/** What {@link applyMemoryUpdate} produced. */
export interface ApplyResult {
  doc: MemoryDocument;
  added: MemoryFact[];
  removedIds: string[];
  rejected: GateRejections;
}

function factGateOk(f: Pick<NewFactUpdate, "scope" | "durability" | "authority">): boolean {
  return f.scope === "user" && f.durability === "durable" && f.authority === "descriptive";
}

function summaryGateOk(s: SectionUpdate): boolean {
  return s.scope === "user" && s.authority === "descriptive";
}

/** A fact's review window in days (its own, else `staleness_age_days`). */
export function effectiveValidDays(f: MemoryFact, cfg: MemoryBackendConfig): number {
  return typeof f.expected_valid_days === "number" && f.expected_valid_days > 0 ? f.expected_valid_days : cfg.staleness_age_days;
}

/** Facts past their review window (confirmation resets the clock); protected categories never qualify. */
export function selectStaleCandidates(doc: MemoryDocument, cfg: MemoryBackendConfig, now = Date.now()): MemoryFact[] {
  const protectedCats = new Set(cfg.staleness_protected_categories);
  return doc.facts.filter((f) => {
    if (protectedCats.has(f.category)) return false;
    const ref = Date.parse(f.lastConfirmedAt || f.createdAt);
    if (!Number.isFinite(ref)) return false;
    return ref < now - effectiveValidDays(f, cfg) * DAY_MS;
  });
}

/** Categories with at least `consolidation_min_facts` facts (protected ones excluded), largest first. */
export function selectConsolidationGroups(doc: MemoryDocument, cfg: MemoryBackendConfig): Array<{ category: string; facts: MemoryFact[] }> {
  const protectedCats = new Set(cfg.staleness_protected_categories);
  const by = new Map<string, MemoryFact[]>();
  for (const f of doc.facts) {
    const c = f.category.trim();
    if (!c || protectedCats.has(c)) continue;
    by.set(c, [...(by.get(c) ?? []), f]);
  }
  return [...by.entries()]
    .filter(([, fs]) => fs.length >= cfg.consolidation_min_facts)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .slice(0, cfg.consolidation_max_groups_per_cycle)
    .map(([category, fs]) => ({ category, facts: fs.slice(0, cfg.consolidation_max_sources) }));
}

const UPLOAD_SENTENCE = /[^.!?]*\b(?:upload(?:ed|ing)?(?:\s+\w+){0,3}\s+(?:files?|documents?|attachments?)|file\s+upload|\/mnt\/user-data\/uploads\/|<(?:uploaded_files|current_uploads)>)[^.!?]*[.!?]?\s*/gi;

// Without the leading sentence span: testing a fact needs no backtracking over every start position.
const UPLOAD_MENTION = /\b(?:upload(?:ed|ing)?(?:\s+\w+){0,3}\s+(?:files?|documents?|attachments?)|file\s+upload)|\/mnt\/user-data\/uploads\/|<(?:uploaded_files|current_uploads)>/i;

/** Remove sentences about upload events from summaries, and facts about them. */
export function stripUploadMentions(doc: MemoryDocument): MemoryDocument {
  for (const sec of [doc.user, doc.history] as Array<Record<string, { summary: string }>>) {
    for (const v of Object.values(sec)) v.summary = v.summary.replace(UPLOAD_SENTENCE, " ").replace(/ {2,}/g, " ").trim();
  }
  doc.facts = doc.facts.filter((f) => !UPLOAD_MENTION.test(f.content));
  return doc;
}

/** `f` with `provenance` set (`user` = the field removed, as in DeerFlow's files). */
function withProvenance(f: MemoryFact, p: FactProvenance): MemoryFact {
  const { provenance: _old, ...rest } = f;
  return p === "user" ? rest : { ...rest, provenance: p };
}

/** Apply `update` to a copy of `current`. */
export function applyMemoryUpdate(current: MemoryDocument, update: MemoryUpdate, options: ApplyOptions): ApplyResult {
  const { cfg } = options;
  const nowDate = options.now ?? new Date();
  const now = nowDate.toISOString();
  // Facts are replaced, never mutated, below: a shallow copy keeps `current` intact without cloning thousands of facts.
  const doc: MemoryDocument = {
    ...current,
    user: Object.fromEntries(Object.entries(current.user).map(([k, v]) => [k, { ...v }])) as MemoryDocument["user"],
    history: Object.fromEntries(Object.entries(current.history).map(([k, v]) => [k, { ...v }])) as MemoryDocument["history"],
    facts: current.facts.slice(),
  };
  const rejected: GateRejections = { facts: 0, summaries: 0, removals: 0, lowConfidence: 0, untrustedInstructions: 0 };
  const judge = new ProvenanceJudge(options.evidence);

  // Reinforcement needs both the deterministic signal and the model naming the fact.
  if (options.signals.has("reinforcement")) {
    const ids = new Set(update.factsToReinforce.filter((r) => r.scope === "user" && r.reason).map((r) => r.id));
    doc.facts = doc.facts.map((f) => (ids.has(f.id) ? { ...f, lastConfirmedAt: now, confirmationCount: (Number.isInteger(f.confirmationCount) && f.confirmationCount! >= 0 ? f.confirmationCount! : 0) + 1 } : f));
  }

  for (const [group, names] of [[doc.user, USER_SECTIONS], [doc.history, HISTORY_SECTIONS]] as const) {
    const proposed = group === doc.user ? update.user : update.history;
    for (const name of names) {
      const s = proposed[name];
      if (!s || !s.shouldUpdate || !s.summary.trim()) continue;
      if (!summaryGateOk(s)) {
        rejected.summaries++;
        continue;
      }
      // A summary is injected into every prompt: from a turn with tool output or uploads it may not instruct.
      if (judge.untrusted && instructionProblem(s.summary, judge.userText)) {
        rejected.untrustedInstructions++;
        continue;
      }
      (group as Record<string, { summary: string; updatedAt: string }>)[name] = { summary: s.summary.trim(), updatedAt: now };
    }
  }

  // Staleness: only real candidates, at most N removals (least confident first).
  if (update.staleFactsToRemove.length || update.staleFactsToExtend.length) {
    const candidates = new Set(selectStaleCandidates(doc, cfg, nowDate.getTime()).map((f) => f.id));
    const proposedRemove = new Set(update.staleFactsToRemove.map((e) => e.id));
    let toRemove = doc.facts.filter((f) => proposedRemove.has(f.id) && candidates.has(f.id));
    if (toRemove.length > cfg.staleness_max_removals_per_cycle) toRemove = [...toRemove].sort((a, b) => a.confidence - b.confidence).slice(0, cfg.staleness_max_removals_per_cycle);
    const removeIds = new Set(toRemove.map((f) => f.id));
    const extend = new Map(update.staleFactsToExtend.filter((e) => candidates.has(e.id) && !proposedRemove.has(e.id)).map((e) => [e.id, e.extend_by_days]));
    doc.facts = doc.facts
      .filter((f) => !removeIds.has(f.id))
      .map((f) => {
        const by = extend.get(f.id);
        if (by === undefined) return f;
        const ref = Date.parse(f.lastConfirmedAt || f.createdAt);
        const since = Number.isFinite(ref) ? Math.floor((nowDate.getTime() - ref) / DAY_MS) : 0;
        return { ...f, expected_valid_days: Math.min(since + by, cfg.staleness_max_extension_days) };
      });
  }

  const existing = new Set(doc.facts.map((f) => factContentKey(f.content)));
  const creationCap = Math.trunc(cfg.staleness_age_days * cfg.staleness_max_lifetime_multiplier);
  const replacementKeys = new Map<number, string>();
  const added: MemoryFact[] = [];
  update.newFacts.forEach((nf, index) => {
    if (!factGateOk(nf)) {
      rejected.facts++;
      return;
    }
    if (nf.confidence < cfg.fact_confidence_threshold) {
      rejected.lowConfidence++;
      return;
    }
    const key = factContentKey(nf.content);
    if (!key) return;
    const provenance = judge.decide(nf.content, nf.source);
    if (provenance !== "user" && instructionProblem(nf.content, judge.userText)) {
      rejected.untrustedInstructions++;
      return;
    }
    replacementKeys.set(index, key);
    if (existing.has(key)) {
      // The user now states what was only known from a page or file: it becomes theirs.
      if (provenance === "user") doc.facts = doc.facts.map((f) => (factContentKey(f.content) === key && f.provenance ? withProvenance(f, "user") : f));
      return;
    }
    const fact: MemoryFact = withProvenance({ id: newFactId(), content: nf.content.trim(), category: nf.category, confidence: Math.min(1, Math.max(0, nf.confidence)), createdAt: now, source: options.threadId || "unknown" }, provenance);
    if (nf.sourceError) fact.sourceError = nf.sourceError;
    if (nf.expected_valid_days !== undefined) fact.expected_valid_days = Math.min(nf.expected_valid_days, creationCap);
    doc.facts.push(fact);
    added.push(fact);
    existing.add(key);
  });

  doc.facts = selectForCapacity(doc.facts, cfg, options.usage, nowDate.getTime()).kept;

  // Removals run after capacity so a replacement that was evicted cannot turn into a bare delete.
  const removeIds = new Set<string>();
  for (const r of update.factsToRemove) {
    if (r.scope === null || !r.reason) {
      rejected.removals++;
      continue;
    }
    if (r.scope !== "user") {
      rejected.removals++;
      continue;
    }
    if (r.replacementFactIndex !== undefined) {
      const idx = r.replacementFactIndex;
      const key = typeof idx === "number" && Number.isInteger(idx) && idx >= 0 ? replacementKeys.get(idx) : undefined;
      if (!key || !doc.facts.some((f) => f.id !== r.id && factContentKey(f.content) === key)) {
        rejected.removals++;
        continue;
      }
    }
    removeIds.add(r.id);
  }
  if (removeIds.size) doc.facts = doc.facts.filter((f) => !removeIds.has(f.id));

  if (cfg.consolidation_enabled && update.factsToConsolidate.length) consolidate(doc, update, cfg, now, creationCap);

  stripUploadMentions(doc);
  const keptIds = new Set(doc.facts.map((f) => f.id));
  const removedIds = current.facts.filter((f) => !keptIds.has(f.id)).map((f) => f.id);
  return { doc, added: added.filter((f) => keptIds.has(f.id)), removedIds, rejected };
}

function consolidate(doc: MemoryDocument, update: MemoryUpdate, cfg: MemoryBackendConfig, now: string, creationCap: number): void {
  const allowed = new Set(selectConsolidationGroups(doc, cfg).flatMap((g) => g.facts.map((f) => f.id)));
  const index = new Map(doc.facts.map((f) => [f.id, f]));
  const consumed = new Set<string>();
  const merged: MemoryFact[] = [];
  for (const d of update.factsToConsolidate) {
    if (merged.length >= cfg.consolidation_max_groups_per_cycle) break;
    if (d.sourceIds.length < 2 || d.sourceIds.length > cfg.consolidation_max_sources) continue;
    if (d.sourceIds.some((id) => consumed.has(id) || !index.has(id) || !allowed.has(id))) continue;
    if (!factGateOk(d.consolidated)) continue;
    const sources = d.sourceIds.map((id) => index.get(id)!);
    // A merge is as trusted as its least trusted source, and may not turn page content into an instruction.
    const provenance = sources.map(factProvenance).reduce(leastTrusted, "user" as FactProvenance);
    if (provenance !== "user" && instructionProblem(d.consolidated.content)) continue;
    // A merge may not be more confident than its most confident source.
    const confidence = Math.min(Math.max(0, Math.min(1, d.consolidated.confidence)), Math.max(...sources.map((s) => s.confidence)));
    if (confidence < cfg.fact_confidence_threshold) continue;
    const newest = sources.map((s) => s.createdAt).sort().at(-1) ?? now;
    const fact: MemoryFact = withProvenance({ id: newFactId(), content: d.consolidated.content, category: d.consolidated.category, confidence, createdAt: newest, source: "consolidation", consolidatedAt: now, consolidatedFrom: [...d.sourceIds] }, provenance);
    const errors = [...new Set(sources.map((s) => s.sourceError).filter((e): e is string => !!e))];
    if (errors.length) fact.sourceError = errors.join("\n");
    const newestMs = Date.parse(newest);
    const deadlines = sources.map((s) => Date.parse(s.createdAt) + effectiveValidDays(s, cfg) * DAY_MS).filter(Number.isFinite);
    const days = deadlines.length && Number.isFinite(newestMs) ? Math.floor((Math.min(...deadlines) - newestMs) / DAY_MS) : cfg.staleness_age_days;
    fact.expected_valid_days = Math.min(Math.max(days, 1), creationCap);
    d.sourceIds.forEach((id) => consumed.add(id));
    merged.push(fact);
  }
  if (consumed.size) doc.facts = [...doc.facts.filter((f) => !consumed.has(f.id)), ...merged];
}
