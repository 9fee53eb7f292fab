import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const requireFromHere = createRequire(import.meta.url);

/**
 * Runs SQLite WAL checkpoints on a worker thread with its own connection, so
 * the fsync of a checkpoint never stalls the event loop in the middle of a run
 * (with `wal_autocheckpoint` on, one write in a few hundred paid ~15 ms).
 * PASSIVE checkpoints never block writers or readers.
 */
export class WalCheckpointWorker {
  private readonly worker: Worker;
  private closed = false;

  constructor(dbPath: string, intervalMs = 1000) {
    const source = `
      const { parentPort, workerData } = require("node:worker_threads");
      const Database = require(workerData.module);
      const db = new Database(workerData.path);
      db.pragma("busy_timeout = 1000");
      const tick = () => { try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {} };
      const timer = setInterval(tick, workerData.intervalMs);
      parentPort.on("message", (m) => {
        if (m === "close") { clearInterval(timer); tick(); try { db.close(); } catch {} parentPort.close(); }
      });
    `;
    this.worker = new Worker(source, {
      eval: true,
      // Plain JavaScript that needs none of the parent's flags: a process started through a TypeScript loader
      // would otherwise load that loader again in the thread.
      execArgv: [],
      workerData: { path: dbPath, intervalMs, module: requireFromHere.resolve("better-sqlite3") },
    });
    this.worker.unref();
    this.worker.on("error", () => {
      /* the main connection keeps working; the WAL is checkpointed on close */
    });
  }

  /** Final checkpoint and stop. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.worker.ref(); // keep the process alive until the final checkpoint is done
    await new Promise<void>((resolve) => {
      this.worker.once("exit", () => resolve());
      this.worker.postMessage("close");
      const t = setTimeout(() => {
        void this.worker.terminate().then(() => resolve());
      }, 2000);
      this.worker.once("exit", () => clearTimeout(t));
    });
  }
}
