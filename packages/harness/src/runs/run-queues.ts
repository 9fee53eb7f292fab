import type { LocalRun } from "./local-run";

/** The runs queued in this process behind each thread's active run, in the order they start. */
export class RunQueues {
  private readonly byThread = new Map<string, LocalRun[]>();

  /** Queued runs of a thread (a copy). */
  of(threadId: string): LocalRun[] {
    return [...(this.byThread.get(threadId) ?? [])];
  }

  size(threadId: string): number {
    return this.byThread.get(threadId)?.length ?? 0;
  }

  /** The next run to start on the thread. */
  head(threadId: string): LocalRun | undefined {
    return this.byThread.get(threadId)?.[0];
  }

  push(run: LocalRun): void {
    const q = this.byThread.get(run.threadId);
    if (q) q.push(run);
    else this.byThread.set(run.threadId, [run]);
  }

  /** Queue `run` before the runs created after it (a taken-over queued run was queued first). */
  insertByAge(run: LocalRun): void {
    const q = this.byThread.get(run.threadId) ?? [];
    const at = q.findIndex((r) => r.record.createdAt > run.record.createdAt);
    q.splice(at < 0 ? q.length : at, 0, run);
    this.byThread.set(run.threadId, q);
  }

  /** Take the next run of the thread out of its queue. */
  shift(threadId: string): LocalRun | undefined {
    return this.byThread.get(threadId)?.shift();
  }

  /** Drop `run` from its thread's queue (no-op when not queued). */
  remove(run: LocalRun): void {
    const q = this.byThread.get(run.threadId);
    const at = q ? q.indexOf(run) : -1;
    if (at >= 0) q!.splice(at, 1);
  }
}
