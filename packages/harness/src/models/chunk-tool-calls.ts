import { parse as parsePartialJson } from "partial-json";
import type { ChunkToolCall, InvalidToolCall, ToolCallChunk } from "../messages";

/** The arguments of one chunk: `{}` for none, the object its (possibly partial) JSON text reads as, else undefined. */
function chunkArgs(text: string | null | undefined): Record<string, unknown> | undefined {
  if (!text) return {};
  try {
    const v = parsePartialJson(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `tool_calls` and `invalid_tool_calls` of a streamed AI message chunk, as LangChain derives them from its
 * `tool_call_chunks`: each fragment's argument text is read as partial JSON on its own; one that reads as an object
 * is a call (name `""` and id null when the fragment continues an earlier one), any other is an invalid call with
 * no error. A client merging the chunks by `index` re-derives the whole calls from the merged fragments.
 */
export function chunkToolCalls(chunks: readonly ToolCallChunk[]): { tool_calls: ChunkToolCall[]; invalid_tool_calls: InvalidToolCall[] } {
  const calls: ChunkToolCall[] = [];
  const invalid: InvalidToolCall[] = [];
  for (const c of chunks) {
    const args = chunkArgs(c.args);
    if (args) calls.push({ name: c.name ?? "", args, id: c.id ?? null, type: "tool_call" });
    else invalid.push({ name: c.name ?? null, args: c.args ?? null, id: c.id ?? null, error: null, type: "invalid_tool_call" });
  }
  return { tool_calls: calls, invalid_tool_calls: invalid };
}

/**
 * Merge tool-call fragments by `index`, as LangChain adds chunks: argument and name text concatenated, the first id
 * kept. Fragments without an index stay separate.
 */
export function mergeToolCallChunks(a: readonly ToolCallChunk[], b: readonly ToolCallChunk[]): ToolCallChunk[] {
  const out = a.map((c) => ({ ...c }));
  for (const c of b) {
    const same = typeof c.index === "number" ? out.find((x) => x.index === c.index) : undefined;
    if (!same) {
      out.push({ ...c });
      continue;
    }
    if (c.args) same.args = (same.args ?? "") + c.args;
    if (c.name) same.name = (same.name ?? "") + c.name;
    if (!same.id && c.id) same.id = c.id;
  }
  return out;
}
