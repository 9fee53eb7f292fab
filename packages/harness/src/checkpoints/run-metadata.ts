import type { CheckpointMetadata, CheckpointRecord } from "./types";

/**
 * Metadata key of a stored checkpoint that holds only its own keys: the id of
 * the run's first checkpoint in the thread (its "base"), whose other keys it
 * inherits. The checkpointer adds it when writing and removes it when reading,
 * so nobody reading through the checkpointer ever sees it.
 */
export const RUN_BASE_KEY = "__run_base";

/**
 * Keys that belong to one checkpoint, never to its run: always stored, never
 * inherited. `__next` is the run loop's "what runs after this checkpoint".
 */
const OWN_KEYS: ReadonlySet<string> = new Set(["step", "source", "run_id", "writer", "interrupts", "__next", RUN_BASE_KEY]);

/**
 * What a run writes into every checkpoint (its config metadata: the agent's
 * settings, replay markers) is stored once per run. The first checkpoint a
 * run writes on a thread carries all of it; the later ones store their own
 * keys, any key whose value differs, and the id of that first checkpoint.
 * The first checkpoint is always an ancestor of the later ones (each is
 * written on top of the previous one), so it is stored whenever they are.
 */
export function compactRunMetadata(metadata: CheckpointMetadata, baseId: string, base: CheckpointMetadata): CheckpointMetadata | undefined {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(base)) {
    // A run-level key this checkpoint lacks cannot be inherited: store it whole.
    if (!OWN_KEYS.has(key) && !(key in metadata)) return undefined;
  }
  for (const key of Object.keys(metadata)) {
    const value = metadata[key];
    if (OWN_KEYS.has(key) || !(key in base) || !sameValue(value, base[key])) out[key] = value;
  }
  out[RUN_BASE_KEY] = baseId;
  return out as CheckpointMetadata;
}

/**
 * Whether a run's later checkpoints should inherit from this first one: only
 * when what they would inherit is larger than the reference to it (a run
 * with hardly any metadata stores it whole, as before).
 */
export function worthInheriting(base: CheckpointMetadata, baseId: string): boolean {
  const inherited: Record<string, unknown> = {};
  for (const key of Object.keys(base)) if (!OWN_KEYS.has(key)) inherited[key] = base[key];
  try {
    return JSON.stringify(inherited).length > RUN_BASE_KEY.length + baseId.length + 6;
  } catch {
    return false;
  }
}

/** The id of the checkpoint whose run metadata a stored record inherits, if it inherits any. */
export function runBaseOf(record: CheckpointRecord): string | undefined {
  const id = record.metadata[RUN_BASE_KEY];
  return typeof id === "string" ? id : undefined;
}

/** A stored record with its full metadata (its own keys over its run's, the marker removed). */
export function expandRunMetadata(record: CheckpointRecord, base: CheckpointMetadata): CheckpointRecord {
  const metadata: Record<string, unknown> = {};
  for (const key of Object.keys(base)) if (!OWN_KEYS.has(key)) metadata[key] = base[key];
  for (const key of Object.keys(record.metadata)) if (key !== RUN_BASE_KEY) metadata[key] = record.metadata[key];
  return { ...record, metadata: metadata as CheckpointMetadata };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}
