/**
 * Parsing the updater's answer. The model is asked for one JSON object; some
 * providers still wrap it in prose, fences or thinking, so the first object
 * that has the required keys is taken. Nothing is repaired: a truncated or
 * malformed answer is an {@link MemoryUpdateParseError} and the update is
 * retried on the next turn.
 */
import { DeerFlowError } from "../errors";
import { provenanceLabel } from "./provenance";
import type { FactProvenance } from "./provenance";

/** The updater answered something that is not a usable memory update. */
export class MemoryUpdateParseError extends DeerFlowError {
  constructor(message: string) {
    super("memory_update_invalid_json", message);
  }
}

/** A summary update. */
export interface SectionUpdate {
  summary: string;
  shouldUpdate: boolean;
  scope: string | null;
  authority: string | null;
}

/** A proposed fact (gate labels kept for the write gate, never stored). */
export interface NewFactUpdate {
  content: string;
  category: string;
  confidence: number;
  expected_valid_days?: number;
  sourceError?: string;
  scope: string | null;
  durability: string | null;
  authority: string | null;
  /** The model's `source` label (`user` / `tool` / `upload`); it can only lower what the pipeline decides. */
  source: FactProvenance | null;
}

/** A proposed triple. */
export interface RelationUpdate {
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  correction: boolean;
}

/** The normalized update. */
export interface MemoryUpdate {
  user: Record<string, SectionUpdate>;
  history: Record<string, SectionUpdate>;
  newFacts: NewFactUpdate[];
  factsToReinforce: Array<{ id: string; scope: string | null; reason: string }>;
  factsToRemove: Array<{ id: string; scope: string | null; reason: string; replacementFactIndex?: unknown }>;
  staleFactsToRemove: Array<{ id: string; reason: string }>;
  staleFactsToExtend: Array<{ id: string; extend_by_days: number; reason: string }>;
  factsToConsolidate: Array<{ sourceIds: string[]; consolidated: NewFactUpdate }>;
  threadSummary: string;
  relations: RelationUpdate[];
}

const REQUIRED = ["user", "history", "newFacts"];

const label = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim().toLowerCase() : null);
const str = (v: unknown): string => (typeof v === "string" ? v.trim() : "");
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function finite(v: unknown): number | null {
  if (typeof v === "boolean" || v === null || v === undefined) return null;
  const n = typeof v === "string" ? (v.trim() ? Number(v) : NaN) : typeof v === "number" ? v : NaN;
  return Number.isFinite(n) ? n : null;
}

/** A positive whole number of days, or undefined. */
export function validDays(v: unknown): number | undefined {
  if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
  const n = Math.trunc(v);
  return n > 0 ? n : undefined;
}

function normalizeFact(raw: unknown, defaultConfidence = 0.5): NewFactUpdate | null {
  if (!isObj(raw)) return null;
  const content = str(raw.content);
  if (!content) return null;
  const confidence = raw.confidence === undefined ? defaultConfidence : finite(raw.confidence);
  if (confidence === null) return null;
  const fact: NewFactUpdate = {
    content,
    category: str(raw.category) || "context",
    confidence,
    scope: label(raw.scope),
    durability: label(raw.durability),
    authority: label(raw.authority),
    source: provenanceLabel(raw.source),
  };
  const evd = validDays(raw.expected_valid_days);
  if (evd !== undefined) fact.expected_valid_days = evd;
  const se = str(raw.sourceError);
  if (se) fact.sourceError = se;
  return fact;
}

function normalizeSections(raw: unknown): Record<string, SectionUpdate> {
  const out: Record<string, SectionUpdate> = {};
  if (!isObj(raw)) return out;
  for (const [k, v] of Object.entries(raw)) {
    if (!isObj(v)) continue;
    out[k] = { summary: typeof v.summary === "string" ? v.summary : "", shouldUpdate: v.shouldUpdate === true, scope: label(v.scope), authority: label(v.authority) };
  }
  return out;
}

/** Normalize a parsed object into a {@link MemoryUpdate}. */
export function normalizeMemoryUpdate(data: Record<string, unknown>): MemoryUpdate {
  const newFacts: NewFactUpdate[] = [];
  let droppedFact = !Array.isArray(data.newFacts);
  for (const f of list(data.newFacts)) {
    const n = normalizeFact(f);
    if (n) newFacts.push(n);
    else droppedFact = true;
  }
  const factsToRemove: MemoryUpdate["factsToRemove"] = [];
  for (const e of list(data.factsToRemove)) {
    // A bare id string is an unlabelled removal: kept so the gate rejects it visibly.
    if (typeof e === "string" && e.trim()) factsToRemove.push({ id: e.trim(), scope: null, reason: "" });
    else if (isObj(e) && str(e.id)) {
      const r: MemoryUpdate["factsToRemove"][number] = { id: str(e.id), scope: label(e.scope), reason: str(e.reason) };
      if ("replacementFactIndex" in e) r.replacementFactIndex = e.replacementFactIndex;
      factsToRemove.push(r);
    }
  }
  // Removing facts while some proposed replacements were unreadable could delete without replacing.
  if (factsToRemove.length && droppedFact) throw new MemoryUpdateParseError("Unsafe partial memory update: factsToRemove with malformed newFacts");
  const relations: RelationUpdate[] = [];
  for (const r of list(data.relations)) {
    if (!isObj(r)) continue;
    const subject = str(r.subject);
    const relation = str(r.relation);
    const object = str(r.object);
    if (!subject || !relation || !object) continue;
    relations.push({ subject, relation, object, confidence: Math.min(1, Math.max(0, finite(r.confidence) ?? 0.8)), correction: r.correction === true });
  }
  return {
    user: normalizeSections(data.user),
    history: normalizeSections(data.history),
    newFacts,
    factsToReinforce: list(data.factsToReinforce).flatMap((e) => (isObj(e) && str(e.id) ? [{ id: str(e.id), scope: label(e.scope), reason: str(e.reason) }] : [])),
    factsToRemove,
    staleFactsToRemove: list(data.staleFactsToRemove).flatMap((e) => (isObj(e) && str(e.id) ? [{ id: str(e.id), reason: str(e.reason) }] : [])),
    staleFactsToExtend: list(data.staleFactsToExtend).flatMap((e) => {
      if (!isObj(e) || !str(e.id) || typeof e.extend_by_days !== "number" || !Number.isFinite(e.extend_by_days)) return [];
      const by = Math.trunc(e.extend_by_days);
      return by > 0 ? [{ id: str(e.id), extend_by_days: by, reason: str(e.reason) }] : [];
    }),
    factsToConsolidate: list(data.factsToConsolidate).flatMap((e) => {
      if (!isObj(e)) return [];
      const ids = [...new Set(list(e.sourceIds).filter((x): x is string => typeof x === "string" && x !== ""))];
      const c = normalizeFact(e.consolidated, 0.9);
      return ids.length >= 2 && c ? [{ sourceIds: ids, consolidated: c }] : [];
    }),
    threadSummary: str(data.threadSummary),
    relations,
  };
}

/** Find and normalize the update in a model answer. */
export function parseMemoryUpdate(text: string): MemoryUpdate {
  const s = text.trim();
  for (let i = s.indexOf("{"); i !== -1; i = s.indexOf("{", i + 1)) {
    const end = matchingBrace(s, i);
    if (end === -1) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(s.slice(i, end + 1));
    } catch {
      continue;
    }
    if (isObj(parsed) && REQUIRED.every((k) => k in parsed)) return normalizeMemoryUpdate(parsed);
  }
  throw new MemoryUpdateParseError("No valid memory update JSON object found in the updater's answer");
}

/** Index of the brace closing the object opened at `start` (string-aware), or -1. */
function matchingBrace(s: string, start: number): number {
  let depth = 0;
  let inStr = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inStr) {
      if (c === "\\") i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}
