import { isoNow } from "../clock";
import { CheckpointError } from "../errors";
import { randomHexPooled } from "../messages/ids";
import type { AgentState } from "../state";
import { applyDelta, diffState } from "./delta";
import { MemoryCheckpointStore } from "./memory-store";
import { compactRunMetadata, expandRunMetadata, runBaseOf, worthInheriting } from "./run-metadata";
import type { CheckpointFence, CheckpointMetadata, CheckpointRecord, CheckpointStore, ListCheckpointOptions } from "./types";

/** A checkpoint with its reconstructed state. */
export interface LoadedCheckpoint {
  record: CheckpointRecord;
  values: AgentState;
}

/** Options of {@link Checkpointer}. */
export interface CheckpointerOptions {
  /** How many threads' latest states are kept in memory (default 256). */
  cacheSize?: number;
}

/** The run whose checkpoints a thread is receiving: where its run metadata is stored and its latest checkpoint. */
interface RunBase {
  runId: string;
  baseId: string;
  metadata: CheckpointMetadata;
  headId: string;
  /** False when the run's metadata is too small to be worth inheriting: its checkpoints are stored whole. */
  inherits: boolean;
}

/**
 * The Gregorian epoch (1582-10-15) to the Unix epoch in 100-ns ticks
 * (0x01b21dd213814000), split at bit 28: `OFFSET_HI * 2^28 + OFFSET_LO`. The
 * 60-bit timestamp of an id is computed in two such halves, so plain numbers
 * hold it exactly (ms × 10,000 alone is past 2^53).
 */
const TWO_28 = 0x10000000;
const OFFSET_HI = 0x1b21dd21;
const OFFSET_LO = 0x3814000;
/** The last id's timestamp: its millisecond and its 100-ns tick within it (0–9,999). */
let lastMs = -1;
let lastSub = 0;

function hex(v: number, width: number): string {
  return v.toString(16).padStart(width, "0");
}

/**
 * A new checkpoint id: a UUID v6 like LangGraph's, whose hex form sorts by
 * creation time. Ids made in the same 100 ns tick, or while the clock is set
 * back, are bumped by one tick so they stay strictly increasing within the
 * process.
 */
export function newCheckpointId(): string {
  let ms = Date.now();
  let sub = 0;
  if (ms <= lastMs) {
    ms = lastMs;
    sub = lastSub + 1;
    if (sub === 10_000) {
      ms++;
      sub = 0;
    }
  }
  lastMs = ms;
  lastSub = sub;
  const msHi = Math.floor(ms / TWO_28);
  let lo = (ms - msHi * TWO_28) * 10_000 + sub + OFFSET_LO;
  const carry = Math.floor(lo / TWO_28);
  lo -= carry * TWO_28;
  const hi = msHi * 10_000 + OFFSET_HI + carry;
  const rnd = randomHexPooled(8);
  // clock_seq: the RFC variant (10) over 14 random bits, then 48 random bits of node
  const clockSeq = 0x8000 | (Number.parseInt(rnd.slice(0, 4), 16) & 0x3fff);
  return `${hex(hi, 8)}-${hex(lo >>> 12, 4)}-6${hex(lo & 0xfff, 3)}-${clockSeq.toString(16)}-${rnd.slice(4)}`;
}

/**
 * Reconstructs state from deltas and keeps the latest state of recently used
 * threads in memory, so a new step costs the same at turn 200 as at turn 2.
 * Share one instance per store (see {@link asCheckpointer}).
 */
export class Checkpointer {
  readonly store: CheckpointStore;
  private readonly cache = new Map<string, LoadedCheckpoint>();
  private readonly cacheSize: number;
  /** Per thread, the run writing to it (see {@link compactRunMetadata}). */
  private readonly runs = new Map<string, RunBase>();
  /** Full metadata of recently read or written run bases, by checkpoint id (immutable once stored). */
  private readonly bases = new Map<string, CheckpointMetadata>();

  constructor(store: CheckpointStore, options: CheckpointerOptions = {}) {
    this.store = store;
    this.cacheSize = options.cacheSize ?? 256;
  }

  private remember(threadId: string, loaded: LoadedCheckpoint): void {
    this.cache.delete(threadId);
    this.cache.set(threadId, loaded);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  /** Load the latest checkpoint of a thread, or a specific one. */
  async load(threadId: string, checkpointId?: string): Promise<LoadedCheckpoint | undefined> {
    const cached = this.cache.get(threadId);
    if (cached && (!checkpointId || cached.record.checkpointId === checkpointId)) {
      if (!checkpointId) {
        // Verify the cached head is still the head (another process may have written): its id is enough.
        const head = this.store.headId ? await this.store.headId(threadId) : (await this.store.get(threadId))?.checkpointId;
        if (head === cached.record.checkpointId) return cached;
      } else {
        return cached;
      }
    }
    const stored = await this.store.get(threadId, checkpointId);
    if (!stored) return undefined;
    const chain = await this.store.chain(threadId, stored.checkpointId);
    if (!chain.length || chain[chain.length - 1].checkpointId !== stored.checkpointId) {
      throw new CheckpointError(`Checkpoint chain of ${stored.checkpointId} is broken`, { code: "checkpoint_corrupt" });
    }
    let values: AgentState = { messages: [] };
    for (const rec of chain) values = applyDelta(values, rec.delta);
    const target = await this.withRunMetadata(stored, chain);
    const loaded = { record: target, values };
    if (!checkpointId) this.remember(threadId, loaded);
    return loaded;
  }

  /** Persist `next` as a new checkpoint whose parent holds `prev`; resolves once it is durable. */
  async save(
    threadId: string,
    parent: { checkpointId: string | null; values: AgentState | undefined },
    next: AgentState,
    metadata: CheckpointMetadata,
  ): Promise<LoadedCheckpoint> {
    const queued = this.queue(threadId, parent, next, metadata);
    await queued.durable;
    return queued.loaded;
  }

  /**
   * Queue `next` as a new checkpoint and return it at once, with a promise
   * that settles when the write is durable. The checkpoint is the thread's
   * cached head from now on (reads of the store commit queued writes first,
   * so every reader sees it either way); writes of one store commit in the
   * order they were queued. If the write fails, the cached head is dropped
   * and `durable` rejects with a {@link CheckpointError}. A `fence` goes to
   * the store with the write (see {@link CheckpointFence}).
   */
  queue(
    threadId: string,
    parent: { checkpointId: string | null; values: AgentState | undefined },
    next: AgentState,
    metadata: CheckpointMetadata,
    fence?: CheckpointFence,
  ): { loaded: LoadedCheckpoint; durable: Promise<void> } {
    const record: CheckpointRecord = {
      threadId,
      checkpointId: newCheckpointId(),
      parentId: parent.checkpointId,
      createdAt: isoNow(),
      metadata,
      delta: diffState(parent.values, next),
    };
    const loaded = { record, values: next };
    const durable = this.store.put(this.storedForm(record), fence);
    this.remember(threadId, loaded);
    durable.catch(() => {
      if (this.cache.get(threadId) === loaded) this.cache.delete(threadId);
      const run = this.runs.get(threadId);
      if (run && (run.baseId === record.checkpointId || run.headId === record.checkpointId)) this.runs.delete(threadId);
    });
    return { loaded, durable };
  }

  /**
   * The record as stored: a checkpoint that continues the run whose first
   * checkpoint is known here stores only what is its own (see
   * {@link compactRunMetadata}); any other becomes its run's base.
   */
  private storedForm(record: CheckpointRecord): CheckpointRecord {
    const runId = record.metadata.run_id;
    const { threadId } = record;
    if (typeof runId !== "string") {
      this.runs.delete(threadId);
      return record;
    }
    const run = this.runs.get(threadId);
    if (run && run.runId === runId && run.headId === record.parentId) {
      run.headId = record.checkpointId;
      // A run writes the same run-level metadata into each of its checkpoints: not worth inheriting at its first,
      // not at its later ones either (no need to weigh it again at every step).
      if (!run.inherits) return record;
      const compact = compactRunMetadata(record.metadata, run.baseId, run.metadata);
      if (compact) return { ...record, metadata: compact };
    }
    this.runs.delete(threadId);
    const inherits = worthInheriting(record.metadata, record.checkpointId);
    this.runs.set(threadId, { runId, baseId: record.checkpointId, metadata: record.metadata, headId: record.checkpointId, inherits });
    if (this.runs.size > this.cacheSize) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
    if (inherits) this.rememberBase(record.checkpointId, record.metadata);
    return record;
  }

  private rememberBase(checkpointId: string, metadata: CheckpointMetadata): void {
    this.bases.delete(checkpointId);
    this.bases.set(checkpointId, metadata);
    if (this.bases.size > this.cacheSize * 4) {
      const oldest = this.bases.keys().next().value;
      if (oldest !== undefined) this.bases.delete(oldest);
    }
  }

  /**
   * A stored record with its full metadata: a record that inherits its run's
   * metadata gets it from `known` (records read along with it), the bases
   * seen recently, or the store.
   */
  private async withRunMetadata(
    record: CheckpointRecord,
    known?: ReadonlyMap<string, CheckpointRecord> | readonly CheckpointRecord[],
  ): Promise<CheckpointRecord> {
    const baseId = runBaseOf(record);
    if (!baseId) return record;
    const cached = this.bases.get(baseId);
    if (cached) return expandRunMetadata(record, cached);
    const near = known instanceof Map ? known.get(baseId) : (known as readonly CheckpointRecord[] | undefined)?.find((r) => r.checkpointId === baseId);
    const rec = near ?? (await this.store.get(record.threadId, baseId));
    if (!rec) {
      throw new CheckpointError(`Checkpoint ${record.checkpointId} inherits the metadata of checkpoint ${baseId}, which is not stored`, {
        code: "checkpoint_corrupt",
      });
    }
    this.rememberBase(baseId, rec.metadata);
    return expandRunMetadata(record, rec.metadata);
  }

  /** Checkpoint records of a thread, newest first (no state), each with its full metadata. */
  async list(threadId: string, options?: ListCheckpointOptions): Promise<CheckpointRecord[]> {
    const records = await this.store.list(threadId, options);
    const byId = new Map(records.map((r) => [r.checkpointId, r]));
    const out: CheckpointRecord[] = [];
    for (const rec of records) out.push(await this.withRunMetadata(rec, byId));
    return out;
  }

  /** Delete a thread's checkpoints. */
  async deleteThread(threadId: string): Promise<void> {
    this.cache.delete(threadId);
    this.runs.delete(threadId);
    await this.store.deleteThread(threadId);
  }

  /** Forget cached state (e.g. after external writes). */
  invalidate(threadId?: string): void {
    if (threadId) {
      this.cache.delete(threadId);
      this.runs.delete(threadId);
    } else {
      this.cache.clear();
      this.runs.clear();
    }
  }
}

const shared = new WeakMap<CheckpointStore, Checkpointer>();

/** The shared {@link Checkpointer} of a store (created on first use). */
export function asCheckpointer(storeOrCheckpointer: CheckpointStore | Checkpointer | undefined): Checkpointer {
  if (!storeOrCheckpointer) return new Checkpointer(new MemoryCheckpointStore());
  if (storeOrCheckpointer instanceof Checkpointer) return storeOrCheckpointer;
  let cp = shared.get(storeOrCheckpointer);
  if (!cp) {
    cp = new Checkpointer(storeOrCheckpointer);
    shared.set(storeOrCheckpointer, cp);
  }
  return cp;
}
