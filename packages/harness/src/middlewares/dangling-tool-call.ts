import { z } from "zod";
import type { AIMessage, InvalidToolCall, Message, ToolCall, ToolMessage } from "../messages";
import { toolMessage } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { parseMiddlewareOptions } from "./zod-options";

/** Max chars of a parser error quoted back to the model. */
export const MAX_RECOVERY_ERROR_DETAIL_LEN = 500;
/** Name given to tool calls whose name is missing or empty. */
export const UNKNOWN_TOOL_NAME = "unknown_tool";
/** Placeholder text for a tool call that never got a result. */
export const INTERRUPTED_TOOL_CALL_TEXT = "[Tool call was interrupted and did not return a result.]";
const EMPTY_TOOL_NAME_ERROR = "Tool call could not be executed because its name was missing or empty.";
const SYNTHETIC_ID_PREFIX = "deerflow_synthetic_tool_call_";

const optionsSchema = z.object({});
/** Options of {@link createDanglingToolCallMiddleware} (none). */
export type DanglingToolCallOptions = z.input<typeof optionsSchema>;

/** A tool call normalized from any of the three places an AI message can hold one. */
interface NormalizedCall {
  id: unknown;
  name: string;
  invalidName: boolean;
  invalid: boolean;
  error?: unknown;
}

type RawCall = Record<string, unknown>;

const validName = (n: unknown): n is string => typeof n === "string" && n.trim().length > 0;
const validId = (id: unknown): id is string => typeof id === "string" && id.trim().length > 0;
const normalizeName = (n: unknown): string => (validName(n) ? n.trim() : UNKNOWN_TOOL_NAME);
const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function parseJsonObject(v: unknown): Record<string, unknown> | null {
  if (typeof v !== "string") return null;
  try {
    const parsed = JSON.parse(v);
    return isPlainObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** A JSON-object string safe to replay to OpenAI-compatible providers. */
function normalizeArgsText(args: unknown): string {
  if (isPlainObject(args)) {
    try {
      return JSON.stringify(args);
    } catch {
      return "{}";
    }
  }
  return parseJsonObject(args) !== null ? (args as string) : "{}";
}

function rawCalls(msg: AIMessage): RawCall[] {
  const raw = msg.additional_kwargs?.tool_calls;
  return Array.isArray(raw) ? (raw.filter(isPlainObject) as RawCall[]) : [];
}

function rawName(raw: RawCall): unknown {
  if (validName(raw.name)) return raw.name;
  const fn = raw.function;
  return isPlainObject(fn) ? fn.name : raw.name;
}

/** Structured calls, raw provider calls (only when nothing structured exists) and invalid calls. */
function messageToolCalls(msg: AIMessage): NormalizedCall[] {
  const out: NormalizedCall[] = [];
  const structured = (msg.tool_calls ?? []) as unknown[];
  const invalid = (msg.invalid_tool_calls ?? []) as unknown[];
  for (const tc of structured) {
    if (!isPlainObject(tc)) continue;
    out.push({ id: tc.id, name: normalizeName(tc.name), invalidName: !validName(tc.name), invalid: false });
  }
  if (!structured.length && !invalid.length) {
    for (const raw of rawCalls(msg)) {
      const name = rawName(raw);
      out.push({ id: raw.id, name: normalizeName(name), invalidName: !validName(name), invalid: false });
    }
  }
  for (const tc of invalid) {
    if (!isPlainObject(tc)) continue;
    out.push({ id: tc.id, name: normalizeName(tc.name), invalidName: !validName(tc.name), invalid: true, error: tc.error });
  }
  return out;
}

/** The text of the synthetic error result for a call without a result. */
export function syntheticToolResultText(call: { name: string; invalidName?: boolean; invalid?: boolean; error?: unknown }): string {
  if (call.invalidName) return `[${EMPTY_TOOL_NAME_ERROR} Use one of the available tool names when retrying.]`;
  if (call.invalid) {
    const err = typeof call.error === "string" && call.error ? call.error.slice(0, MAX_RECOVERY_ERROR_DETAIL_LEN) : "";
    if (call.name === "write_file") {
      return (
        "[write_file failed before execution: the tool-call arguments were not valid JSON, " +
        "so no file was written. This often happens when the model tries to write a very " +
        "large Markdown file in a single tool call, especially when `content` contains " +
        "unescaped quotes, inline JSON, backslashes, or code fences. Do not retry the same " +
        "large `write_file` payload for this artifact; provide the report/content directly " +
        "as normal assistant text in your next response. If a file write is still needed " +
        `later, split the file into smaller sections instead of one large payload.${err ? ` Parser error: ${err}` : ""}]`
      );
    }
    return err
      ? `[Tool call could not be executed because its arguments were invalid: ${err}]`
      : "[Tool call could not be executed because its arguments were invalid.]";
  }
  return INTERRUPTED_TOOL_CALL_TEXT;
}

/** Copy of an AI message whose tool-call names/args are safe to serialize (same object when already clean). */
function sanitizeAIMessage(msg: AIMessage): AIMessage {
  // Copied on the first change only: a clean message (the common case) costs no allocation.
  let next: AIMessage | null = null;
  if (msg.tool_calls?.length) {
    let c = false;
    const calls = msg.tool_calls.map((tc) => {
      if (!isPlainObject(tc)) return tc;
      const name = normalizeName(tc.name);
      const args = isPlainObject(tc.args) ? tc.args : {};
      if (name === tc.name && args === tc.args) return tc;
      c = true;
      return { ...tc, name, args } as ToolCall;
    });
    if (c) {
      next ??= { ...msg };
      next.tool_calls = calls;
    }
  }
  if (msg.invalid_tool_calls?.length) {
    let c = false;
    const calls = msg.invalid_tool_calls.map((tc) => {
      if (!isPlainObject(tc)) return tc;
      const name = normalizeName(tc.name);
      const args = normalizeArgsText(tc.args);
      if (name === tc.name && args === tc.args) return tc;
      c = true;
      return { ...tc, name, args } as InvalidToolCall;
    });
    if (c) {
      next ??= { ...msg };
      next.invalid_tool_calls = calls;
    }
  }
  const raw = msg.additional_kwargs?.tool_calls;
  if (Array.isArray(raw)) {
    let c = false;
    const calls = raw.map((r) => {
      if (!isPlainObject(r)) return r;
      const fn = r.function;
      if (isPlainObject(fn)) {
        const name = normalizeName(fn.name);
        const args = normalizeArgsText(fn.arguments);
        if (name === fn.name && args === fn.arguments) return r;
        c = true;
        return { ...r, function: { ...fn, name, arguments: args } };
      }
      const name = normalizeName(r.name);
      if (name === r.name) return r;
      c = true;
      return { ...r, name };
    });
    if (c) {
      next ??= { ...msg };
      next.additional_kwargs = { ...msg.additional_kwargs, tool_calls: calls };
    }
  }
  return next ?? msg;
}

interface OpenClaim {
  original: unknown;
  synthetic: string;
  name: unknown;
}

function relabel(calls: unknown[], msgIndex: number, source: string, claims: OpenClaim[]): unknown[] | null {
  let changed = false;
  const out = calls.map((tc, position) => {
    if (!isPlainObject(tc) || validId(tc.id)) return tc;
    const synthetic = `${SYNTHETIC_ID_PREFIX}${msgIndex}_${source}_${position}`;
    const name = validName(tc.name) ? tc.name : isPlainObject(tc.function) ? tc.function.name : tc.name;
    claims.push({ original: tc.id, synthetic, name });
    changed = true;
    return { ...tc, id: synthetic };
  });
  return changed ? out : null;
}

function namesCanPair(a: unknown, b: unknown): boolean {
  if (!validName(a) || !validName(b)) return true;
  return a.trim() === b.trim();
}

/**
 * Give tool calls with a missing/empty id a stable synthetic id, and move
 * results with a malformed id onto the call they unambiguously answer.
 */
function normalizeToolCallIds(messages: readonly Message[]): Message[] {
  const rewritten = new Map<number, Message>();
  let open: OpenClaim[] = [];
  let positional = false;
  messages.forEach((msg, index) => {
    if (msg.type === "ai") {
      const claims: OpenClaim[] = [];
      let next: AIMessage | null = null;
      const structured = (msg.tool_calls ?? []) as unknown[];
      const invalid = (msg.invalid_tool_calls ?? []) as unknown[];
      const s = relabel(structured, index, "call", claims);
      if (s) {
        next ??= { ...msg };
        next.tool_calls = s as ToolCall[];
      }
      const inv = relabel(invalid, index, "invalid", claims);
      if (inv) {
        next ??= { ...msg };
        next.invalid_tool_calls = inv as InvalidToolCall[];
      }
      const raw = msg.additional_kwargs?.tool_calls;
      if (!structured.length && !invalid.length && Array.isArray(raw)) {
        const r = relabel(raw, index, "raw", claims);
        if (r) {
          next ??= { ...msg };
          next.additional_kwargs = { ...msg.additional_kwargs, tool_calls: r };
        }
      }
      open = claims;
      // Scan this AI message's own results in place (no copy of the rest of the list per AI message).
      let malformedResults = 0;
      for (let j = index + 1; j < messages.length; j++) {
        const later = messages[j];
        if (later.type === "ai") break;
        if (later.type === "tool" && !validId(later.tool_call_id)) malformedResults++;
      }
      positional = malformedResults === claims.length;
      if (next) rewritten.set(index, next);
      return;
    }
    if (msg.type !== "tool" || validId(msg.tool_call_id)) return;
    const candidates = open
      .map((c, pos) => ({ c, pos }))
      .filter(({ c }) => c.original === msg.tool_call_id && namesCanPair(c.name, msg.name));
    if (!candidates.length || (candidates.length > 1 && !positional)) return;
    const [claim] = open.splice(candidates[0].pos, 1);
    rewritten.set(index, { ...msg, tool_call_id: claim.synthetic });
  });
  if (!rewritten.size) return messages as Message[];
  return messages.map((m, i) => rewritten.get(i) ?? m);
}

/**
 * Patch a message list for a model request: every tool call gets its result
 * immediately after its AI message (a synthetic error result when missing),
 * orphan tool results are dropped, malformed names/args are sanitized.
 * Returns null when the list is already well-formed.
 */
export function patchDanglingToolCalls(messages: readonly Message[]): Message[] | null {
  const normalized = normalizeToolCallIds(messages);
  const results = new Map<string, ToolMessage[]>();
  for (const m of normalized) {
    if (m.type !== "tool") continue;
    const q = results.get(m.tool_call_id) ?? [];
    q.push(m);
    results.set(m.tool_call_id, q);
  }
  const callIds = new Set<string>();
  for (const m of normalized) {
    if (m.type !== "ai") continue;
    for (const tc of messageToolCalls(m)) if (validId(tc.id)) callIds.add(tc.id);
  }
  const patched: Message[] = [];
  let dropped = 0;
  for (const m of normalized) {
    if (m.type === "tool") {
      if (!callIds.has(m.tool_call_id)) dropped++;
      continue; // re-emitted right after its AI message
    }
    if (m.type !== "ai") {
      patched.push(m);
      continue;
    }
    patched.push(sanitizeAIMessage(m));
    for (const tc of messageToolCalls(m)) {
      if (!validId(tc.id)) continue;
      const existing = results.get(tc.id)?.shift();
      if (existing) {
        patched.push(tc.invalidName && !validName(existing.name) ? { ...existing, name: tc.name } : existing);
      } else {
        patched.push(toolMessage(syntheticToolResultText(tc), { tool_call_id: tc.id, name: tc.name, status: "error" }));
      }
    }
  }
  const same = !dropped && patched.length === messages.length && patched.every((m, i) => m === messages[i]);
  return same ? null : patched;
}

/**
 * DeerFlow's DanglingToolCallMiddleware. Request-only: inserts a synthetic
 * `ToolMessage(status="error")` right after each AI tool call lacking a result
 * (interrupted / invalid-args / empty-name texts), regroups results after their
 * call, drops orphan tool results and sanitizes malformed tool-call names and
 * arguments (structured, `invalid_tool_calls` and raw `additional_kwargs.tool_calls`).
 */
export function createDanglingToolCallMiddleware(options: DanglingToolCallOptions = {}): AgentMiddleware {
  parseMiddlewareOptions("DanglingToolCallMiddleware", optionsSchema, options);
  return {
    name: "DanglingToolCallMiddleware",
    async wrapModelCall(request, handler) {
      const patched = patchDanglingToolCalls(request.messages);
      return handler(patched ? { ...request, messages: patched } : request);
    },
  };
}
