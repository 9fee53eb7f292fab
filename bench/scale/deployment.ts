/**
 * One deployment of the scale bench: N `deerflow serve` processes on one
 * config and data dir (SQLite, or PostgreSQL + Redis), and what it measures
 * on them: a burst of concurrent runs, cancels sent to another process than
 * the one executing, and the storage of a 60-turn thread.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { percentile } from "../lib";
import { cancelRun, createThread, runIdOf, streamRun, waitForRun } from "../../packages/server/test/scale-out/helpers/runs-api";
import { scaleOutConfigYaml } from "../../packages/server/test/scale-out/helpers/serve-process";
import type { ServeProcess } from "../../packages/server/test/scale-out/helpers/serve-process";
import type { ServeEntry } from "./serve-entry";

/** Where a deployment stores runs. */
export interface DeploymentSpec {
  label: string;
  processes: number;
  llmUrl: string;
  root: string;
  postgresUrl?: string;
  redisUrl?: string;
}

/** What one deployment measured. */
export interface DeploymentFigures {
  label: string;
  processes: number;
  runs: number;
  wall_ms: number;
  ttfe_p50_ms: number;
  ttfe_p99_ms: number;
  cancel_p50_ms: number;
  cancel_p99_ms: number;
  /** Server processes' CPU (user + system) during the burst, per run. */
  cpu_ms_per_run: number;
  /** Bytes the database grew by over a 60-turn thread (checkpoints, transcript, runs, indexes). */
  storage_bytes_60_turns: number;
}

/** A started deployment. */
export class Deployment {
  private constructor(
    readonly spec: DeploymentSpec,
    readonly procs: ServeProcess[],
    readonly dataDir: string,
  ) {}

  /** Start the processes from `entry` (all at once: on PostgreSQL they also race for the migrations). */
  static async start(spec: DeploymentSpec, entry: ServeEntry): Promise<Deployment> {
    const dir = path.join(spec.root, spec.label);
    fs.mkdirSync(dir, { recursive: true });
    const configPath = path.join(dir, "config.yaml");
    const dataDir = path.join(dir, "data");
    fs.writeFileSync(configPath, scaleOutConfigYaml({ llmUrl: spec.llmUrl, postgresUrl: spec.postgresUrl, redisUrl: spec.redisUrl, leaseSeconds: 30, graceSeconds: 10 }));
    const started = await Promise.allSettled(Array.from({ length: spec.processes }, (_, i) => entry.start({ name: `${spec.label}#${i}`, configPath, dataDir })));
    const procs = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      // the ones that did start must not outlive the bench
      await Promise.all(procs.map((p) => p.stop()));
      throw failed.reason;
    }
    return new Deployment(spec, procs, dataDir);
  }

  private cpuMs(): number {
    return this.procs.reduce((sum, p) => sum + p.cpuMs(), 0);
  }

  /** `count` new threads, spread round-robin over the processes, created a few at a time. */
  async createThreads(count: number): Promise<string[]> {
    const threads: string[] = [];
    for (let i = 0; i < count; i += 50) {
      threads.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => createThread(this.procs[(i + j) % this.procs.length]!.api)))));
    }
    return threads;
  }

  /**
   * One concurrent streaming run on each of `threads` (created ahead with
   * {@link createThreads}: the burst is what is measured), spread
   * round-robin over the processes; each run is two model calls of the
   * scripted model's delay. Returns wall time, time to first event and CPU
   * per run.
   */
  async burst(threads: string[], modelDelayMs: number): Promise<{ wall: number; ttfe: number[]; cpuPerRun: number }> {
    const runs = threads.length;
    const cpu0 = this.cpuMs();
    const t0 = performance.now();
    const ttfe: number[] = [];
    await Promise.all(
      threads.map(async (tid, i) => {
        const start = performance.now();
        const s = await streamRun(this.procs[i % this.procs.length]!.api, tid, `[bench ${modelDelayMs}] run ${i}`);
        const frames = await s.done;
        if (s.status !== 200 || frames.at(-1)?.event !== "end" || frames.some((f) => f.event === "error")) {
          const errors = frames.filter((f) => f.event === "error").map((f) => JSON.stringify(f.data));
          throw new Error(`run ${i} on ${this.spec.label} failed: HTTP ${s.status}, events ${frames.map((f) => f.event).join(",")} ${errors.join(" ")}`);
        }
        ttfe.push(frames[0]!.at - start);
      }),
    );
    const wall = performance.now() - t0;
    return { wall, ttfe, cpuPerRun: (this.cpuMs() - cpu0) / runs };
  }

  /**
   * `count` runs hang in their model call; each is cancelled through the
   * next process (the same one when there is one) and timed until its
   * stream's `end` reached the client reading it from the executing one.
   */
  async cancels(count: number): Promise<number[]> {
    const n = this.procs.length;
    const started = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const owner = this.procs[i % n]!;
        const tid = await createThread(owner.api);
        const stream = await streamRun(owner.api, tid, `[hang] cancel ${i}`);
        const runId = await runIdOf(stream);
        await waitForRun(owner.api, tid, runId, (s) => s === "running");
        return { i, tid, runId, stream };
      }),
    );
    const out: number[] = [];
    for (const r of started) {
      const via = this.procs[(r.i + 1) % n]!;
      const t0 = performance.now();
      const status = await cancelRun(via.api, r.tid, r.runId, "interrupt");
      if (status !== 202) throw new Error(`cancel answered ${status}`);
      const end = await r.stream.waitFor((f) => f.event === "end", 15_000);
      out.push(end.at - t0);
    }
    return out;
  }

  /** Bytes the database grew by over `turns` sequential turns of one thread (instant answers). */
  async storagePerThread(turns: number): Promise<number> {
    const api = this.procs[0]!.api;
    const before = await this.dbBytes();
    const tid = await createThread(api);
    for (let i = 0; i < turns; i++) {
      const s = await streamRun(api, tid, `turn ${i}: a question of about the length people type`);
      const frames = await s.done;
      if (frames.at(-1)?.event !== "end") {
        throw new Error(`turn ${i} did not end: HTTP ${s.status}, ${s.failure?.message ?? ""} events ${frames.map((f) => `${f.event}${f.event === "error" ? JSON.stringify(f.data) : ""}`).join(",")}\n${this.procs[0]!.output.slice(-2000)}`);
      }
    }
    return (await this.dbBytes()) - before;
  }

  /** The database's size: PostgreSQL relations (tables, indexes, TOAST), or the SQLite files' pages in use. */
  private async dbBytes(): Promise<number> {
    if (this.spec.postgresUrl) {
      const c = new pg.Client({ connectionString: this.spec.postgresUrl });
      await c.connect();
      try {
        // after a checkpoint of what the run loop queued: a plain VACUUM-free size read of every relation
        const r = await c.query<{ bytes: string }>(
          `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`,
        );
        return Number(r.rows[0]!.bytes);
      } finally {
        await c.end();
      }
    }
    let total = 0;
    for (const f of fs.readdirSync(this.dataDir, { recursive: true }).map(String)) {
      if (!f.endsWith(".db")) continue;
      const db = new Database(path.join(this.dataDir, f), { readonly: true, fileMustExist: true });
      try {
        const pages = Number(db.pragma("page_count", { simple: true })) - Number(db.pragma("freelist_count", { simple: true }));
        total += pages * Number(db.pragma("page_size", { simple: true }));
      } finally {
        db.close();
      }
    }
    return total;
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.stop()));
  }

  /**
   * Delete the deployment's directory (config and data dir, a few thousand
   * files after a burst) once it is stopped. Asynchronous: deleting is slow
   * on a disk mounted with `discard`, and the caller overlaps it with the
   * next deployment's start.
   */
  async remove(): Promise<void> {
    await fs.promises.rm(path.dirname(this.dataDir), { recursive: true, force: true });
  }
}

/** p50/p99 of a list. */
export function p(xs: number[], q: number): number {
  return percentile(xs, q);
}
