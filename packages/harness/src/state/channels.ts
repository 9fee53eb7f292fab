import { InvalidUpdateError } from "../errors";
import type { Message } from "../messages";
import { addMessages } from "./add-messages";

/**
 * One state channel: how an update combines with the current value.
 * Without a reducer the last written value wins.
 */
export interface Channel<V = unknown, U = V> {
  reducer?: (current: V, update: U) => V;
  /** Initial value when the thread has never written this channel. */
  default?: () => V;
}

/** A state schema: channel name → channel. */
export type StateSchema = Record<string, Channel<any, any>>;

/** Agent state. `messages` always exists. Other channels are schema-defined. */
export interface AgentState {
  messages: Message[];
  [channel: string]: unknown;
}

/** A partial update written by a node, hook or tool. `undefined` values mean "not written". */
export type StateUpdate = Record<string, unknown>;

/** The base schema every agent has: just `messages` with `add_messages` semantics. */
export const baseStateSchema: StateSchema = {
  messages: { reducer: addMessages as Channel["reducer"], default: () => [] },
};

/** A last-value channel (no reducer) with an optional default. */
export function lastValue<V>(defaultValue?: () => V): Channel<V, V> {
  return defaultValue ? { default: defaultValue } : {};
}

/**
 * Merge several schemas into one. The same channel may be declared twice only
 * if it is the very same object (middlewares sharing a channel definition).
 */
export function mergeSchemas(...schemas: Array<StateSchema | undefined>): StateSchema {
  const out: StateSchema = {};
  for (const schema of schemas) {
    if (!schema) continue;
    for (const [key, channel] of Object.entries(schema)) {
      const existing = out[key];
      if (existing && existing !== channel && (existing.reducer !== channel.reducer)) {
        throw new InvalidUpdateError(`State channel '${key}' is declared twice with different reducers`);
      }
      out[key] = existing ?? channel;
    }
  }
  return out;
}

// The channels of a schema that have a default, listed once per schema object: every run starts from an initial
// state. A schema is not changed once an agent uses it.
const defaultsOf = new WeakMap<StateSchema, ReadonlyArray<readonly [string, () => unknown]>>();

function channelDefaults(schema: StateSchema): ReadonlyArray<readonly [string, () => unknown]> {
  let list = defaultsOf.get(schema);
  if (!list) {
    list = Object.entries(schema).flatMap(([key, channel]) => (channel.default ? [[key, channel.default] as const] : []));
    defaultsOf.set(schema, list);
  }
  return list;
}

/** The initial state for a schema (fresh default values each time). */
export function initialState(schema: StateSchema): AgentState {
  const state: Record<string, unknown> = {};
  for (const [key, makeDefault] of channelDefaults(schema)) state[key] = makeDefault();
  if (!Array.isArray(state.messages)) state.messages = [];
  return state as AgentState;
}

/**
 * Apply a partial update to a state, returning a new state object (the input
 * is not mutated). Unknown channels are rejected so typos surface early.
 */
export function applyUpdate(schema: StateSchema, state: AgentState, update: StateUpdate | null | undefined): AgentState {
  if (!update) return state;
  let next: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(update)) {
    if (value === undefined) continue;
    const channel = schema[key];
    if (!channel) {
      throw new InvalidUpdateError(
        `Unknown state channel '${key}'. Known channels: ${Object.keys(schema).sort().join(", ")}`,
      );
    }
    if (!next) next = { ...state };
    const current = key in next ? next[key] : channel.default?.();
    next[key] = channel.reducer ? channel.reducer(current, value) : value;
  }
  return (next ?? state) as AgentState;
}
