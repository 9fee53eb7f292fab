import { CheckpointError } from "../errors";
import type { CheckpointRecord, CheckpointStore, ListCheckpointOptions } from "./types";

/** An in-memory checkpoint store (tests, embedded use without persistence). */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly threads = new Map<string, CheckpointRecord[]>();

  async put(record: CheckpointRecord): Promise<void> {
    const list = this.threads.get(record.threadId) ?? [];
    // As the SQLite store: a checkpoint is stored only on top of its parent.
    if (record.parentId && list[list.length - 1]?.checkpointId !== record.parentId && !list.some((r) => r.checkpointId === record.parentId)) {
      throw new CheckpointError(`Failed to write checkpoint ${record.checkpointId}: its parent checkpoint ${record.parentId} is not stored`, { code: "checkpoint_parent_missing" });
    }
    list.push(structuredClone(record));
    this.threads.set(record.threadId, list);
  }

  async get(threadId: string, checkpointId?: string): Promise<CheckpointRecord | undefined> {
    const list = this.threads.get(threadId);
    if (!list || !list.length) return undefined;
    if (!checkpointId) return structuredClone(list[list.length - 1]);
    const rec = list.find((r) => r.checkpointId === checkpointId);
    return rec ? structuredClone(rec) : undefined;
  }

  async headId(threadId: string): Promise<string | undefined> {
    const list = this.threads.get(threadId);
    return list?.length ? list[list.length - 1].checkpointId : undefined;
  }

  async chain(threadId: string, checkpointId: string): Promise<CheckpointRecord[]> {
    const list = this.threads.get(threadId) ?? [];
    const byId = new Map(list.map((r) => [r.checkpointId, r]));
    const out: CheckpointRecord[] = [];
    let cur = byId.get(checkpointId);
    while (cur) {
      out.push(cur);
      cur = cur.parentId ? byId.get(cur.parentId) : undefined;
    }
    return structuredClone(out.reverse());
  }

  async list(threadId: string, options: ListCheckpointOptions = {}): Promise<CheckpointRecord[]> {
    let list = [...(this.threads.get(threadId) ?? [])].reverse();
    if (options.before) {
      const at = list.findIndex((r) => r.checkpointId === options.before);
      list = at >= 0 ? list.slice(at + 1) : [];
    }
    if (options.limit !== undefined) list = list.slice(0, options.limit);
    return structuredClone(list);
  }

  async deleteThread(threadId: string): Promise<void> {
    this.threads.delete(threadId);
  }

  async close(): Promise<void> {}
}
