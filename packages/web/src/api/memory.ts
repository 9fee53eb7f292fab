/** The memory REST API (`/api/memory`, DeerFlow's routes and shapes). */
import { jsonRequest } from "./http";

/** One summary section. */
export interface MemorySection {
  summary: string;
  updatedAt: string;
}

/** One remembered fact. */
export interface MemoryFact {
  id: string;
  content: string;
  category: string;
  confidence: number;
  createdAt: string;
  source: string;
  sourceError?: string;
}

/** DeerFlow's `MemoryResponse`. */
export interface MemoryData {
  version: string;
  revision?: number;
  lastUpdated: string;
  user: Record<"workContext" | "personalContext" | "topOfMind", MemorySection>;
  history: Record<"recentMonths" | "earlierContext" | "longTermBackground", MemorySection>;
  facts: MemoryFact[];
}

/** What recall would inject for a question. */
export interface RecallResult {
  text: string;
  factIds: string[];
  facts: Array<{ id: string; content: string; category: string; relevant: boolean }>;
  threadSummaryIds: string[];
  tripleIds: string[];
  tokens: number;
  ranking: "relevance" | "confidence";
}

function request<T>(method: string, path: string, body?: unknown, base = ""): Promise<T> {
  return jsonRequest<T>(method, path, body, base);
}

/** `GET /api/memory`. */
export const getMemory = (base = "") => request<MemoryData>("GET", "/memory", undefined, base);
/** `POST /api/memory/facts`. */
export const createFact = (fact: { content: string; category: string; confidence: number }, base = "") => request<MemoryData>("POST", "/memory/facts", fact, base);
/** `PATCH /api/memory/facts/{id}`. */
export const updateFact = (id: string, patch: Partial<Pick<MemoryFact, "content" | "category" | "confidence">>, base = "") => request<MemoryData>("PATCH", `/memory/facts/${encodeURIComponent(id)}`, patch, base);
/** `DELETE /api/memory/facts/{id}`. */
export const deleteFact = (id: string, base = "") => request<MemoryData>("DELETE", `/memory/facts/${encodeURIComponent(id)}`, undefined, base);
/** `DELETE /api/memory`. */
export const clearMemory = (base = "") => request<MemoryData>("DELETE", "/memory", undefined, base);
/** `GET /api/memory/settings`. */
export const getMemorySettings = (base = "") => request<{ enabled: boolean }>("GET", "/memory/settings", undefined, base);
/** `PUT /api/memory/settings`. */
export const setMemoryEnabled = (enabled: boolean, base = "") => request<{ enabled: boolean }>("PUT", "/memory/settings", { enabled }, base);
/** `POST /api/memory/recall`. */
export const previewRecall = (query: string, base = "") => request<RecallResult>("POST", "/memory/recall", { query }, base);
