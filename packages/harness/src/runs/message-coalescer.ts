/**
 * Merges consecutive `messages` stream deltas of the same AI message that are
 * produced in the same tick into one frame. Clients concatenate deltas by
 * message id anyway, so the stream means the same, with far fewer frames when
 * the server is busy (many runs) or a provider delivers several tokens at once.
 * Deltas that arrive on separate ticks (a live model streaming) are not held
 * back: the pending frame is flushed at the end of the current tick.
 */

import type { ToolCallChunk } from "../messages";
import { chunkToolCalls, mergeToolCallChunks } from "../models/chunk-tool-calls";

interface Chunk {
  type: string;
  id?: string;
  content: unknown;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  tool_calls?: unknown[];
  tool_call_chunks?: unknown[];
  invalid_tool_calls?: unknown[];
  usage_metadata?: unknown;
  chunk_position?: unknown;
  [key: string]: unknown;
}

function mergeable(event: string, data: unknown): data is [Chunk, unknown] {
  if (!event.startsWith("messages") || !Array.isArray(data) || data.length !== 2) return false;
  const c = data[0] as Chunk | null;
  return !!c && c.type === "AIMessageChunk" && typeof c.id === "string" && typeof c.content === "string";
}

function mergeKwargs(a: Record<string, unknown> = {}, b: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = typeof v === "string" && typeof out[k] === "string" ? (out[k] as string) + v : v;
  return out;
}

/** The merged fragments of two deltas, with the calls they read as (LangChain's addition of chunks). */
function mergedToolCalls(a: Chunk, b: Chunk): Pick<Chunk, "tool_calls" | "tool_call_chunks" | "invalid_tool_calls"> {
  const fragments = mergeToolCallChunks((a.tool_call_chunks ?? []) as ToolCallChunk[], (b.tool_call_chunks ?? []) as ToolCallChunk[]);
  return { tool_call_chunks: fragments, ...chunkToolCalls(fragments) };
}

/** Merge delta `b` into delta `a` (same message id). */
export function mergeChunks(a: Chunk, b: Chunk): Chunk {
  return {
    ...a,
    content: (a.content as string) + (b.content as string),
    additional_kwargs: mergeKwargs(a.additional_kwargs, b.additional_kwargs),
    response_metadata: { ...(a.response_metadata ?? {}), ...(b.response_metadata ?? {}) },
    ...mergedToolCalls(a, b),
    usage_metadata: b.usage_metadata ?? a.usage_metadata ?? null,
    chunk_position: b.chunk_position ?? a.chunk_position ?? null,
  };
}

/** Append delta `b` to `a` in place (a is the coalescer's private copy). */
function appendChunk(a: Chunk, b: Chunk): void {
  a.content = (a.content as string) + (b.content as string);
  if (b.additional_kwargs && Object.keys(b.additional_kwargs).length) a.additional_kwargs = mergeKwargs(a.additional_kwargs, b.additional_kwargs);
  if (b.response_metadata && Object.keys(b.response_metadata).length) a.response_metadata = { ...(a.response_metadata ?? {}), ...b.response_metadata };
  if (b.tool_call_chunks?.length) Object.assign(a, mergedToolCalls(a, b));
  if (b.usage_metadata != null) a.usage_metadata = b.usage_metadata;
  if (b.chunk_position != null) a.chunk_position = b.chunk_position;
}

/** Per-run frame coalescer in front of the run's event buffer. */
export class MessageCoalescer {
  private pending: { event: string; chunk: Chunk; meta: unknown } | null = null;
  private scheduled = false;

  constructor(private readonly out: (event: string, data: unknown) => void) {}

  push(event: string, data: unknown): void {
    // the `last` chunk (usage, finish reason) stays its own frame, as a model streams it
    if (mergeable(event, data) && data[0].chunk_position !== "last") {
      const [chunk, meta] = data;
      if (this.pending && this.pending.event === event && this.pending.chunk.id === chunk.id) {
        appendChunk(this.pending.chunk, chunk);
        return;
      }
      this.flush();
      // A private copy (the runtime's chunk objects are never mutated) that later deltas append to in place.
      this.pending = { event, chunk: mergeChunks(chunk, { ...chunk, content: "", additional_kwargs: {}, tool_calls: [], invalid_tool_calls: [], tool_call_chunks: [] }), meta };
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
      return;
    }
    this.flush();
    this.out(event, data);
  }

  /** Emit the held frame, if any. */
  flush(): void {
    if (!this.pending) return;
    const p = this.pending;
    this.pending = null;
    this.out(p.event, [p.chunk, p.meta]);
  }
}
