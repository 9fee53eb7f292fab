/**
 * The data shapes of long-term memory. `MemoryDocument` is exactly what one
 * `memory.json` holds (DeerFlow's layout: version, revision, lastUpdated,
 * user/history summaries and facts); the HTTP API and the client speak the
 * same shape.
 */

/** One summary section (`workContext`, `recentMonths`, …). */
export interface MemorySection {
  summary: string;
  updatedAt: string;
}

/** Names of the user-context sections. */
export const USER_SECTIONS = ["workContext", "personalContext", "topOfMind"] as const;
/** Names of the history sections. */
export const HISTORY_SECTIONS = ["recentMonths", "earlierContext", "longTermBackground"] as const;

/** A user-context section name. */
export type UserSectionName = (typeof USER_SECTIONS)[number];
/** A history section name. */
export type HistorySectionName = (typeof HISTORY_SECTIONS)[number];

/** Fact categories the updater may use. */
export const FACT_CATEGORIES = ["preference", "knowledge", "context", "behavior", "goal", "correction"] as const;

/** One remembered fact. */
export interface MemoryFact {
  /** `fact_` + 8 hex digits. */
  id: string;
  content: string;
  category: string;
  /** 0..1. */
  confidence: number;
  createdAt: string;
  /** The thread it was learnt in, `manual`, `import`, `consolidation` or `unknown`. */
  source: string;
  /**
   * What the fact rests on when it is not the user's own words: `tool` (a tool
   * result such as a fetched page) or `upload` (an uploaded file's contents).
   * Absent = the user (DeerFlow's files have no such field and load unchanged).
   * Such facts are ranked below the user's and injected as unverified.
   */
  provenance?: "tool" | "upload";
  /** For corrections: the mistake to avoid. */
  sourceError?: string;
  /** Review window in days (staleness review). */
  expected_valid_days?: number;
  /** Last explicit user confirmation. */
  lastConfirmedAt?: string;
  confirmationCount?: number;
  updatedAt?: string;
  consolidatedAt?: string;
  consolidatedFrom?: string[];
}

/** The content of one `memory.json`. */
export interface MemoryDocument {
  version: string;
  /** Incremented on every write (optimistic concurrency and index freshness). */
  revision: number;
  lastUpdated: string;
  user: Record<UserSectionName, MemorySection>;
  history: Record<HistorySectionName, MemorySection>;
  facts: MemoryFact[];
}

/** Who a memory belongs to: a user, and a named agent or the default bucket (null). */
export interface MemoryScope {
  userId: string;
  agentName: string | null;
}

/** A stored entity–relation–entity triple (tier 3). */
export interface MemoryTriple {
  id: string;
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  createdAt: string;
  source: string;
  /** The id of the triple that replaced this one (a correction), or null while it holds. */
  supersededBy: string | null;
}

/** A finished thread's short summary (tier 2). */
export interface ThreadSummary {
  threadId: string;
  summary: string;
  updatedAt: string;
}

/** What one injection put into the `<memory>` block (recorded in the run outcome under `memory`). */
export interface MemoryInjectionReport {
  /** Ids of the facts injected, in block order. */
  factIds: string[];
  /** The injected facts' contents (for "remembered: …" in the UI). */
  facts: Array<{ id: string; content: string; category: string; relevant: boolean; provenance?: "tool" | "upload" }>;
  /** Thread ids whose summaries were injected. */
  threadSummaryIds: string[];
  /** Triple ids injected. */
  tripleIds: string[];
  /** Estimated tokens of the block. */
  tokens: number;
  /** `relevance` (query-ranked) or `confidence` (no query). */
  ranking: "relevance" | "confidence";
}

/** An empty section. */
export function emptySection(): MemorySection {
  return { summary: "", updatedAt: "" };
}

/** A fresh empty document. */
export function emptyMemoryDocument(): MemoryDocument {
  return {
    version: "1.0",
    revision: 0,
    lastUpdated: "",
    user: { workContext: emptySection(), personalContext: emptySection(), topOfMind: emptySection() },
    history: { recentMonths: emptySection(), earlierContext: emptySection(), longTermBackground: emptySection() },
    facts: [],
  };
}
