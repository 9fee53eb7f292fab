/**
 * Embeddings for hybrid ranking, through the AI SDK's embedding-model
 * interface (`doEmbed`), so any OpenAI-compatible `/v1/embeddings` endpoint
 * works. Without an `embedding` model memory ranks lexically only.
 */
import type { EmbeddingModelV3 } from "@ai-sdk/provider";
import { ConfigError } from "../errors";
import type { MemoryModelRef } from "../config/memory-config";

/** Turns texts into vectors. */
export interface MemoryEmbedder {
  /** Model id (vectors of different models are never compared). */
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Wrap an AI SDK embedding model, batching by its per-call limit. */
export function embedderFromModel(model: EmbeddingModelV3): MemoryEmbedder {
  return {
    model: model.modelId,
    async embed(texts, signal) {
      const limit = (await model.maxEmbeddingsPerCall) ?? 256;
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += limit) {
        const res = await model.doEmbed({ values: texts.slice(i, i + limit), abortSignal: signal });
        for (const e of res.embeddings) out.push(Float32Array.from(e));
      }
      return out;
    },
  };
}

/** A `models:` entry as far as embeddings need it. */
export interface EmbeddingModelEntry {
  name?: string;
  model?: string;
  api_key?: string | null;
  base_url?: string | null;
}

/**
 * Build the embedder named by `backend_config.embedding`: an inline
 * `{model, api_key, base_url}` or the name of a `models:` entry.
 * @throws ConfigError when a named model does not exist.
 */
export function createEmbedder(ref: MemoryModelRef, models: readonly EmbeddingModelEntry[] = []): MemoryEmbedder {
  let entry: EmbeddingModelEntry;
  if (typeof ref === "string") {
    const found = models.find((m) => m.name === ref);
    entry = found ?? { model: ref };
  } else {
    const named = ref.name ? models.find((m) => m.name === ref.name) : undefined;
    entry = { ...named, ...Object.fromEntries(Object.entries(ref).filter(([, v]) => v !== null && v !== undefined)) };
  }
  if (!entry.model) throw new ConfigError("memory.backend_config.embedding needs a model id", { code: "config_invalid", details: { key: "memory.backend_config.embedding" } });
  const settings = { apiKey: entry.api_key ?? process.env.OPENAI_API_KEY ?? "unset", baseURL: entry.base_url ?? undefined };
  const modelId = entry.model;
  // the OpenAI provider package is imported by the first embedding call, not when the config is read
  let model: Promise<EmbeddingModelV3> | undefined;
  const load = () => (model ??= import("@ai-sdk/openai").then(({ createOpenAI }) => createOpenAI(settings).embedding(modelId)));
  return {
    model: modelId,
    async embed(texts, signal) {
      return embedderFromModel(await load()).embed(texts, signal);
    },
  };
}

/** Cosine similarity (0 for mismatched or zero vectors). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
