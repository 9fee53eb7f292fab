/**
 * `deerflow serve --workers N`: N gateway processes on one port. The
 * primary process (this one) checks the config, builds the web UI once and
 * forks N workers with node:cluster; each worker opens its own runtime and
 * listens on the same port, and the primary hands incoming connections to
 * them round-robin. Runs are shared between the workers through the
 * database (PostgreSQL: records, leases, the thread lock) and the stream
 * bridge (Redis: events, cancels), so any worker can join, stream or cancel
 * a run another one executes, and takes it over when that worker dies.
 */
import cluster from "node:cluster";
import type { Worker } from "node:cluster";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { UsageError } from "../common";
import type { Terminal } from "../io";

/** The message a worker sends the primary once it listens. */
export interface WorkerListening {
  deerflow: "listening";
  url: string;
}

/** Parse `--workers` (default 1). */
export function parseWorkers(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new UsageError(`--workers must be an integer 1-256, got '${raw}'`, "serve");
  return n;
}

/** What `database.backend` and `stream_bridge.type` are in `config` (their defaults when absent). */
export function runSharing(config: AppConfig | undefined): { database: string; bridge: string; shared: boolean } {
  const database = config?.database?.backend ?? (config ? "sqlite" : "memory");
  const bridge = config?.stream_bridge?.type ?? "memory";
  return { database, bridge, shared: database === "postgres" && bridge === "redis" };
}

/**
 * Refuse `--workers N` (N > 1) unless runs are shared between processes:
 * with SQLite or the in-memory bridge every worker would keep its own runs,
 * and a request round-robined to another worker would not find them.
 */
export function checkWorkersAllowed(workers: number, config: AppConfig | undefined, demoMode: boolean): void {
  if (workers <= 1) return;
  if (demoMode) {
    throw new UsageError(`--workers ${workers} is not available in demo mode (its runs live in one process's memory): start with one worker, or write a config.yaml with database.backend: postgres and stream_bridge.type: redis.`, "serve");
  }
  const { database, bridge, shared } = runSharing(config);
  if (shared) return;
  const wrong = [
    database !== "postgres" ? `database.backend is '${database}' (needs 'postgres', with database.postgres_url)` : undefined,
    bridge !== "redis" ? `stream_bridge.type is '${bridge}' (needs 'redis', with stream_bridge.redis_url)` : undefined,
  ].filter(Boolean);
  // the fix names only the sections still to change: one already right is not repeated
  const sections = [
    database !== "postgres" ? "`database: {backend: postgres, postgres_url: $DATABASE_URL}`" : undefined,
    bridge !== "redis" ? "`stream_bridge: {type: redis, redis_url: $REDIS_URL}`" : undefined,
  ].filter(Boolean);
  throw new UsageError(
    `--workers ${workers} needs runs shared between processes, but ${wrong.join(" and ")}. ` +
      `Set ${sections.join(" and ")} in config.yaml (see docs/scale-out.md), or start one worker.`,
    "serve",
  );
}

/** Options of {@link runWorkersPrimary}. */
export interface WorkersPrimaryOptions {
  workers: number;
  term: Terminal;
  /** Printed once every worker listens (the URL and the sign-in banner). */
  banner: (url: string) => string | Promise<string>;
}

/**
 * Fork the workers and supervise them: print the banner once all listen,
 * replace a worker that dies after it listened (its runs are taken over by
 * the others once its leases expire), stop them all on SIGINT/SIGTERM. A
 * worker that fails before it listens stops the start (exit code 1).
 */
export function runWorkersPrimary(opts: WorkersPrimaryOptions): Promise<number | null> {
  const { term } = opts;
  const listening = new Map<number, string>();
  let started = false;
  let stopping = false;
  let failed = false;
  return new Promise((resolveStart) => {
    const fork = (replacement: boolean): Worker => {
      const worker = cluster.fork({ DEERFLOW_SERVE_WORKER: "1" });
      worker.on("message", (msg: unknown) => {
        if (!isListening(msg)) return;
        listening.set(worker.id, msg.url);
        if (replacement) term.error(`[deerflow] worker ${worker.process.pid} listening (replacement)`);
        if (!started && listening.size === opts.workers) {
          started = true;
          const pids = Object.values(cluster.workers ?? {}).map((w) => w?.process.pid);
          void Promise.resolve(opts.banner(msg.url)).then((banner) =>
            term.line(`${banner}\n${opts.workers} workers (pids ${pids.join(", ")}) share the port; runs are shared through PostgreSQL and Redis.`),
          );
          // serving: the primary lives as long as its workers
          resolveStart(null);
        }
      });
      return worker;
    };
    cluster.on("exit", (worker, code, signal) => {
      const wasListening = listening.delete(worker.id);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length) return;
        if (failed) resolveStart(1);
        else process.exit(0);
        return;
      }
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!started) {
        // a worker that cannot start (config, database, port) would fail the same way again: stop the others
        term.error(`[deerflow] worker ${worker.process.pid} exited (${how}) before it listened; stopping.`);
        stopping = true;
        failed = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM");
        if (!Object.keys(cluster.workers ?? {}).length) resolveStart(1);
        return;
      }
      if (!wasListening) {
        term.error(`[deerflow] replacement worker ${worker.process.pid} exited (${how}) before it listened; not restarting it.`);
        return;
      }
      term.error(`[deerflow] worker ${worker.process.pid} exited (${how}); its runs are taken over by the other workers when their leases expire. Starting a replacement.`);
      fork(true);
    });
    const stop = () => {
      if (stopping) return;
      stopping = true;
      const alive = Object.values(cluster.workers ?? {});
      if (!alive.length) process.exit(0);
      for (const w of alive) w?.process.kill("SIGTERM");
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    for (let i = 0; i < opts.workers; i++) fork(false);
  });
}

/** True in a process forked by {@link runWorkersPrimary}. */
export function isServeWorker(): boolean {
  return cluster.isWorker && process.env.DEERFLOW_SERVE_WORKER === "1";
}

/** Tell the primary this worker listens at `url`. */
export function reportListening(url: string): void {
  const msg: WorkerListening = { deerflow: "listening", url };
  process.send?.(msg);
}

function isListening(msg: unknown): msg is WorkerListening {
  return typeof msg === "object" && msg !== null && (msg as { deerflow?: unknown }).deerflow === "listening" && typeof (msg as { url?: unknown }).url === "string";
}
