/**
 * Which other `deerflow serve` processes use the same data dir. Each serve
 * process leaves a marker file named after its pid in
 * `{dataDir}/serve-processes/` while it runs; a marker whose process is gone
 * (killed, crashed) is removed by the next start. On SQLite and the
 * in-memory stream bridge runs live in the process that accepted them, so a
 * second process on the same data dir starts, but is told that the two do
 * not share runs.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** This process's registration. */
export interface ServeRegistration {
  /** Pids of the other live serve processes on this data dir. */
  readonly peers: number[];
  /** Remove this process's marker (also done on exit). */
  release(): void;
}

const DIR = "serve-processes";

/** Whether `pid` is a live process (EPERM: it exists, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Register this process as serving from `dataDir` and list the others. */
export function registerServeProcess(dataDir: string, pid = process.pid): ServeRegistration {
  const dir = path.join(dataDir, DIR);
  mkdirSync(dir, { recursive: true });
  const peers: number[] = [];
  for (const name of readdirSync(dir)) {
    const other = Number(name);
    if (!Number.isInteger(other) || other === pid) continue;
    if (alive(other)) peers.push(other);
    else rmSync(path.join(dir, name), { force: true });
  }
  const marker = path.join(dir, String(pid));
  writeFileSync(marker, JSON.stringify({ pid, startedAt: new Date().toISOString() }));
  const release = () => rmSync(marker, { force: true });
  process.once("exit", release);
  return { peers, release };
}

/** The warning printed when `peers` serve from the same data dir without shared runs. */
export function unsharedPeersWarning(peers: number[], dataDir: string, sharing: { database: string; bridge: string }): string {
  return (
    `WARNING: another deerflow serve (pid ${peers.join(", ")}) uses the data dir ${dataDir} with database.backend '${sharing.database}' and stream_bridge.type '${sharing.bridge}': ` +
    "runs are not shared between them (a run started through one process cannot be joined, streamed or cancelled through the other). " +
    "Threads, accounts and files are shared. For several processes serving the same runs set database.backend: postgres and stream_bridge.type: redis (docs/scale-out.md)."
  );
}
