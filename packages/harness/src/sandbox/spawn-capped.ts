import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { constants as OS } from "node:os";
import { SandboxError } from "../errors";
import { HeadTailBuffer } from "./output-buffer";
import type { ExecuteResult } from "./types";

/** Options of {@link spawnCapped}. */
export interface SpawnCappedOptions {
  cwd?: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes kept per stream (head + tail). */
  maxOutputBytes: number;
  /** After the main process exits, wait this long for pipes held by background children (default 250 ms). */
  drainGraceMs?: number;
  /**
   * Bytes offered to the child on fd 3 (a pipe closed after them), e.g.
   * bwrap's options for `--args 3`; without it the child gets no fd 3.
   */
  fd3Data?: Buffer;
  /** Called with the pid right after spawn (tests, bookkeeping). */
  onSpawn?(pid: number): void;
}

/**
 * Spawn `argv` in its own process group with stdin = /dev/null, capture
 * capped output, and SIGKILL the process group on timeout or abort. The
 * promise settles when the process exits (plus a short drain grace), even if
 * background children keep the pipes open.
 */
export function spawnCapped(argv: string[], options: SpawnCappedOptions): Promise<ExecuteResult> {
  return new Promise<ExecuteResult>((resolve, reject) => {
    if (options.signal?.aborted) {
      resolve({ stdout: "", stderr: "Command cancelled before it started", exitCode: -1, timedOut: false, truncated: false });
      return;
    }
    const child = spawn(argv[0], argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: options.fd3Data ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    if (options.fd3Data) {
      const fd3 = child.stdio[3] as NodeJS.WritableStream | null;
      // EPIPE when the child died before reading: its exit is reported below.
      fd3?.on("error", () => {});
      fd3?.end(options.fd3Data);
    }
    const out = new HeadTailBuffer(options.maxOutputBytes);
    const err = new HeadTailBuffer(options.maxOutputBytes);
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    let timedOut = false;
    let settled = false;
    const killTree = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        try {
          child.kill("SIGKILL");
        } catch {
          /* already gone */
        }
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, Math.max(1, options.timeoutMs));
    const onAbort = () => killTree();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);

    const finish = (code: number | null, sig: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      const exitCode = code ?? (sig ? 128 + (OS.signals[sig] ?? 0) : -1);
      resolve({ stdout: out.text(), stderr: err.text(), exitCode, timedOut, truncated: out.truncated || err.truncated });
    };
    child.on("error", (e) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(new SandboxError(`Command could not start: ${e.message}`, { code: "sandbox_spawn_failed", cause: e }));
    });
    child.on("exit", (code, sig) => {
      let closed = false;
      child.on("close", () => {
        closed = true;
        finish(code, sig);
      });
      setTimeout(() => {
        if (!closed) finish(code, sig);
      }, options.drainGraceMs ?? 250).unref();
    });
  });
}
