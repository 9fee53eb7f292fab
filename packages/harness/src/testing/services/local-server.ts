import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

/** A real database server started on loopback for tests and benchmarks. */
export interface LocalServer {
  /** Connection URL (`postgres://…` or `redis://…`), always on 127.0.0.1. */
  readonly url: string;
  readonly port: number;
  /** Stop the server and remove its data directory. */
  stop(): Promise<void>;
}

/** Thrown when the server's binaries are not installed here (tests skip, CI fails). */
export class LocalServerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LocalServerUnavailableError";
  }
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; the server binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The first of `candidates` that exists, or the bare name when it is on PATH. */
export function findBinary(name: string, candidates: string[]): string | undefined {
  for (const c of candidates) if (existsSync(c)) return c;
  const which = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  const found = which.stdout.trim();
  return which.status === 0 && found ? found : undefined;
}

/** Wait until `probe` succeeds (bounded by attempts, not by wall-clock sleeps in tests: each probe is a real connect). */
export async function waitUntil(probe: () => Promise<boolean>, what: string, child?: ChildProcess, attempts = 400): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (child && child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before it was ready`);
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} did not become ready`);
}

/** Start a long-running server process and collect its output for error messages. */
export function startProcess(cmd: string, args: string[], options: { uid?: number; gid?: number; cwd?: string } = {}): { child: ChildProcess; output: () => string } {
  let out = "";
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], uid: options.uid, gid: options.gid, cwd: options.cwd });
  child.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  return { child, output: () => out };
}

/** Kill a child and wait for it to exit. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
