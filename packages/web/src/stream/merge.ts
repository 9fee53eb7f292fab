import type { ContentBlock, ToolCall, ToolCallChunk, WireMessage } from "./types";

/** Normalises chunk type names to the message types used in `values` (`AIMessageChunk` → `ai`). */
export function normaliseType(type: string | undefined): string {
  if (!type) return "ai";
  const t = type.toLowerCase();
  if (t === "aimessagechunk" || t === "aimessage" || t === "ai") return "ai";
  if (t === "humanmessage" || t === "humanmessagechunk" || t === "human" || t === "user") return "human";
  if (t === "toolmessage" || t === "toolmessagechunk" || t === "tool") return "tool";
  if (t === "systemmessage" || t === "system") return "system";
  return t;
}

/** True when the wire message is a streaming delta (to be concatenated) rather than a complete message. */
export function isChunk(msg: WireMessage): boolean {
  return typeof msg.type === "string" && msg.type.endsWith("Chunk");
}

function mergeContent(a: WireMessage["content"], b: WireMessage["content"]): WireMessage["content"] {
  if (b === undefined || b === null) return a;
  if (typeof a === "string" && typeof b === "string") return a + b;
  const left: ContentBlock[] = typeof a === "string" ? (a ? [{ type: "text", text: a }] : []) : [...(a ?? [])];
  const right: ContentBlock[] = typeof b === "string" ? (b ? [{ type: "text", text: b }] : []) : b;
  for (const block of right) {
    const idx = typeof block.index === "number" ? (block.index as number) : -1;
    const target = idx >= 0 ? left.find((x) => x.index === idx) : left[left.length - 1];
    if (target && target.type === block.type && (typeof block.text === "string" || typeof block.thinking === "string")) {
      const merged: ContentBlock = { ...target };
      if (typeof block.text === "string") merged.text = (target.text ?? "") + block.text;
      if (typeof block.thinking === "string") merged.thinking = (target.thinking ?? "") + block.thinking;
      left[left.indexOf(target)] = merged;
    } else {
      left.push({ ...block });
    }
  }
  return left;
}

function mergeKwargs(a: Record<string, unknown> = {}, b: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    if (typeof prev === "string" && typeof v === "string") out[k] = prev + v;
    else if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

/** Merges tool-call chunk lists: chunks sharing an `index` concatenate their `args` text. */
export function mergeToolCallChunks(a: ToolCallChunk[] = [], b: ToolCallChunk[] = []): ToolCallChunk[] {
  const out = a.map((c) => ({ ...c }));
  for (const chunk of b) {
    const idx = chunk.index ?? null;
    const target = idx !== null ? out.find((c) => c.index === idx) : chunk.id ? out.find((c) => c.id === chunk.id) : undefined;
    if (target) {
      target.args = (target.args ?? "") + (chunk.args ?? "");
      if (chunk.name) target.name = chunk.name;
      if (chunk.id) target.id = chunk.id;
    } else {
      out.push({ ...chunk, args: chunk.args ?? "" });
    }
  }
  return out;
}

/**
 * Best-effort parse of possibly incomplete JSON (tool arguments while they stream).
 * Closes open strings/objects/arrays; returns `{}` when nothing usable is there.
 */
export function parsePartialJson(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    /* fall through to repair */
  }
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") stack.pop();
  }
  let repaired = text;
  if (escaped) repaired = repaired.slice(0, -1);
  if (inString) repaired += '"';
  repaired = repaired.replace(/[,:]\s*$/, "");
  for (let i = stack.length - 1; i >= 0; i--) repaired += stack[i];
  try {
    const v = JSON.parse(repaired);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Tool calls derived from merged chunks (used while a message is still streaming). */
export function toolCallsFromChunks(chunks: ToolCallChunk[]): ToolCall[] {
  return chunks
    .filter((c) => c.name || c.id)
    .map((c) => ({ id: c.id ?? undefined, name: c.name ?? "", args: parsePartialJson(c.args ?? ""), type: "tool_call" }));
}

/**
 * Folds a streamed delta into the accumulated message with the same id.
 * Strings concatenate, `additional_kwargs` strings concatenate, tool-call chunks merge by index.
 */
export function mergeChunk(prev: WireMessage | undefined, chunk: WireMessage): WireMessage {
  const type = normaliseType(chunk.type);
  if (!prev) {
    const chunks = mergeToolCallChunks([], chunk.tool_call_chunks ?? []);
    return {
      ...chunk,
      type,
      content: chunk.content ?? "",
      tool_call_chunks: chunks,
      tool_calls: chunks.length ? toolCallsFromChunks(chunks) : (chunk.tool_calls ?? []),
    };
  }
  const chunks = mergeToolCallChunks(prev.tool_call_chunks, chunk.tool_call_chunks);
  return {
    ...prev,
    type,
    content: mergeContent(prev.content, chunk.content),
    additional_kwargs: mergeKwargs(prev.additional_kwargs, chunk.additional_kwargs),
    response_metadata: { ...(prev.response_metadata ?? {}), ...(chunk.response_metadata ?? {}) },
    usage_metadata: chunk.usage_metadata ?? prev.usage_metadata,
    name: chunk.name ?? prev.name,
    tool_call_chunks: chunks,
    tool_calls: chunks.length ? toolCallsFromChunks(chunks) : prev.tool_calls,
  };
}
