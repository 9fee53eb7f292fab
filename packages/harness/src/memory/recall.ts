/**
 * Recall for one question: BM25 hits over the scope's facts (and, with an
 * embedding model, the nearest facts by cosine similarity, fused by
 * reciprocal rank), the relations one hop from entities the question names,
 * and the summaries of earlier threads that match it.
 */
import type { MemoryEmbedder } from "./embeddings";
import { cosine } from "./embeddings";
import type { MemoryIndex, ScoredId } from "./index-types";
import { rankFactHits } from "./injection";
import type { MemoryDocument, MemoryTriple, ThreadSummary } from "./types";

/** Minimum cosine similarity for a fact to count as relevant by meaning alone. */
export const EMBEDDING_MIN_SIMILARITY = 0.3;
/** At most this many facts are taken as relevant by meaning. */
const EMBEDDING_TOP_K = 30;
/** At most this many earlier threads are recalled. */
const MAX_THREADS = 3;
const RRF_K = 60;

/** What was recalled for a question. */
export interface Recall {
  relevantFactIds: string[];
  triples: MemoryTriple[];
  threadSummaries: ThreadSummary[];
}

/** Inputs of {@link recallFor}. */
export interface RecallInput {
  index: MemoryIndex;
  scope: string;
  doc: MemoryDocument;
  query: string;
  /** The current thread (its own summary is not recalled). */
  threadId?: string | null;
  embedder?: MemoryEmbedder | null;
  queryVector?: Float32Array | null;
  graph: boolean;
  threads: boolean;
}

/** Fuse BM25 and vector rankings (reciprocal rank fusion). */
export function fuseRankings(lexical: readonly ScoredId[], semantic: readonly ScoredId[]): ScoredId[] {
  const score = new Map<string, number>();
  lexical.forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + 1 / (RRF_K + i + 1)));
  semantic.forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + 1 / (RRF_K + i + 1)));
  return [...score.entries()].map(([id, s]) => ({ id, score: s }));
}

/** Nearest facts to a query vector. */
export function semanticHits(vectors: Map<string, Float32Array>, q: Float32Array): ScoredId[] {
  const hits: ScoredId[] = [];
  for (const [id, v] of vectors) {
    const s = cosine(q, v);
    if (s >= EMBEDDING_MIN_SIMILARITY) hits.push({ id, score: s });
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, EMBEDDING_TOP_K);
}

/** Recall facts, relations and earlier threads for `query`. */
export async function recallFor(input: RecallInput): Promise<Recall> {
  const { index, scope, doc, query } = input;
  if (!query.trim()) return { relevantFactIds: [], triples: [], threadSummaries: [] };
  const lexical = await index.searchFacts(scope, query);
  let hits = lexical;
  if (input.embedder && input.queryVector) {
    const semantic = semanticHits(await index.vectors(scope, input.embedder.model), input.queryVector);
    if (semantic.length) hits = fuseRankings(lexical, semantic);
  }
  const triples = input.graph ? await index.recallTriples(scope, query) : [];
  let threadSummaries: ThreadSummary[] = [];
  if (input.threads) {
    const ids = (await index.searchThreadSummaries(scope, query, MAX_THREADS + 1)).map((h) => h.id).filter((id) => id !== input.threadId);
    if (ids.length) {
      const all = new Map((await index.threadSummaries(scope)).map((s) => [s.threadId, s]));
      threadSummaries = ids.slice(0, MAX_THREADS).flatMap((id) => (all.has(id) ? [all.get(id)!] : []));
    }
  }
  return { relevantFactIds: rankFactHits(doc, hits), triples, threadSummaries };
}
