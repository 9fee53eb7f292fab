/**
 * `POST /v1/embeddings` of the scripted server, in OpenAI's wire format.
 * Vectors are deterministic: by default a hashed bag of words
 * (plurals folded), so texts sharing words are close; tests that need "meaning" pass
 * their own `embed` function. It is a test double, not a model.
 */
import type { ServerResponse } from "node:http";
import { sendJson } from "./openai-wire";

/** Turns one input text into a vector. */
export type ScriptedEmbedFn = (text: string, model: string) => number[];

/** Default dimensions of {@link hashedEmbedding}. */
export const SCRIPTED_EMBEDDING_DIMS = 64;

/** Plural to singular, the only folding the double does. */
function stem(w: string): string {
  return w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w;
}

/** A deterministic unit vector: each word hashed (FNV-1a) to a dimension and a sign. */
export function hashedEmbedding(text: string, dims = SCRIPTED_EMBEDDING_DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const w = stem(raw);
    let h = 0x811c9dc5;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dims] += h & 0x80000000 ? -1 : 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** Answer an embeddings request body. */
export function sendEmbeddings(res: ServerResponse, body: Record<string, unknown> | null, embed: ScriptedEmbedFn): void {
  const input = body?.input;
  const texts = typeof input === "string" ? [input] : Array.isArray(input) && input.every((x) => typeof x === "string") ? (input as string[]) : null;
  if (!texts) return sendJson(res, 400, { error: { message: "'input' must be a string or a list of strings", type: "invalid_request_error" } });
  const model = typeof body?.model === "string" ? body.model : "scripted-embedding";
  const tokens = texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
  sendJson(res, 200, {
    object: "list",
    model,
    data: texts.map((t, index) => ({ object: "embedding", index, embedding: embed(t, model) })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
