import type { Message } from "../messages";
import type { AgentState } from "../state";
import type { MessageOp, StateDelta } from "./types";

/**
 * The delta that turns `prev` into `next`. Messages are compared by identity
 * and id so the common case (appending) stores only the new messages; other
 * channels are stored whole when their value changed (by reference).
 */
export function diffState(prev: AgentState | undefined, next: AgentState): StateDelta {
  const delta: StateDelta = {};
  const ops = diffMessages(prev?.messages ?? [], next.messages ?? []);
  if (ops.length) delta.messages = ops;
  const values: Record<string, unknown> = {};
  let changed = false;
  for (const key of Object.keys(next)) {
    if (key === "messages") continue;
    if (!prev || prev[key] !== next[key]) {
      if (prev && sameJson(prev[key], next[key])) continue;
      values[key] = next[key] === undefined ? null : next[key];
      changed = true;
    }
  }
  if (prev) {
    for (const key of Object.keys(prev)) {
      if (key !== "messages" && !(key in next)) {
        values[key] = null;
        changed = true;
      }
    }
  }
  if (changed) delta.values = values;
  return delta;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

function diffMessages(prev: readonly Message[], next: readonly Message[]): MessageOp[] {
  // Fast path: next extends prev (same objects in the same order).
  let common = 0;
  const n = Math.min(prev.length, next.length);
  while (common < n && prev[common] === next[common]) common++;
  if (common === prev.length) {
    return next.slice(common).map((message) => ({ op: "add", message }) as MessageOp);
  }
  // Same id sequence prefix with replacements, removals and appends.
  const ops: MessageOp[] = [];
  const nextIds = new Set(next.map((m) => m.id));
  const survivors = prev.filter((m) => nextIds.has(m.id));
  for (const m of prev) if (!nextIds.has(m.id)) ops.push({ op: "remove", id: m.id as string });
  // survivors must appear as a prefix of next in the same order; otherwise rewrite all.
  let ok = survivors.length <= next.length;
  for (let i = 0; ok && i < survivors.length; i++) if (survivors[i].id !== next[i].id) ok = false;
  if (!ok) {
    return [{ op: "clear" }, ...next.map((message) => ({ op: "add", message }) as MessageOp)];
  }
  if (ops.length > survivors.length + 1 && survivors.length < prev.length / 2) {
    // Mostly removed: a clear is cheaper to store and replay.
    return [{ op: "clear" }, ...next.map((message) => ({ op: "add", message }) as MessageOp)];
  }
  for (let i = 0; i < survivors.length; i++) {
    if (survivors[i] !== next[i] && !sameJson(survivors[i], next[i])) ops.push({ op: "replace", message: next[i] });
  }
  for (let i = survivors.length; i < next.length; i++) ops.push({ op: "add", message: next[i] });
  return ops;
}

/** Apply a delta to a state (returns a new state; the input is not mutated). */
export function applyDelta(state: AgentState, delta: StateDelta): AgentState {
  const next: AgentState = { ...state };
  if (delta.messages && delta.messages.length) {
    let messages = state.messages ? state.messages.slice() : [];
    let index: Map<string, number> | null = null;
    const ensureIndex = () => {
      if (!index) {
        index = new Map();
        messages.forEach((m, i) => m.id && index!.set(m.id, i));
      }
      return index;
    };
    for (const op of delta.messages) {
      switch (op.op) {
        case "add":
          if (index) (index as Map<string, number>).set(op.message.id as string, messages.length);
          messages.push(op.message);
          break;
        case "replace": {
          const at = ensureIndex().get(op.message.id as string);
          if (at === undefined) messages.push(op.message);
          else messages[at] = op.message;
          break;
        }
        case "remove":
          messages = messages.filter((m) => m.id !== op.id);
          index = null;
          break;
        case "clear":
          messages = [];
          index = null;
          break;
      }
    }
    next.messages = messages;
  }
  if (delta.values) {
    for (const [k, v] of Object.entries(delta.values)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
  }
  return next;
}

/** Byte size of a delta as stored (JSON). */
export function deltaSize(delta: StateDelta): number {
  return Buffer.byteLength(JSON.stringify(delta));
}
