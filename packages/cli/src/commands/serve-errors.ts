/**
 * What `deerflow serve` prints when it cannot start: every failure gets a
 * `Fix:` line. Failures the harness and the gateway raise as typed errors get
 * theirs from their code (common.ts); the operating system's own errors while
 * binding the port or preparing the data dir get one here, naming the option
 * to change; anything else points to `deerflow doctor`, which checks the
 * config, the data dir, PostgreSQL and Redis one by one.
 */
import path from "node:path";
import { DeerFlowError } from "@deerflow-ts/harness/errors";
import { FixedError, hasKnownFix, UsageError } from "../common";

/** Where `serve` was asked to listen and keep its data. */
export interface ServeTarget {
  host: string;
  port: number;
  dataDir: string;
  /** The command that listens, named in the port-in-use fix (default `serve`). */
  command?: string;
}

interface SystemError extends Error {
  code?: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
}

const DATA_DIR_WHY: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "a part of its path is a file, not a directory",
  EEXIST: "a file is in the way",
  EROFS: "the file system is read-only",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
};

function within(dir: string, p: string | undefined): boolean {
  if (!p) return false;
  const rel = path.relative(dir, path.resolve(p));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * The fix for an operating-system error while starting (binding the port,
 * preparing the data dir), or undefined when it is not one we know. Also used
 * by `scripted-llm`, which binds a port too.
 */
export function systemFix(err: SystemError, at: ServeTarget): string | undefined {
  if (err.syscall === "listen" || err.syscall === "bind" || err.code === "EADDRINUSE") {
    if (err.code === "EADDRINUSE") {
      return `Port ${at.port} on ${at.host} is already in use (another \`deerflow ${at.command ?? "serve"}\`, or another program). Stop that one, or pick another port with --port N (--port 0 takes a free one).`;
    }
    if (err.code === "EACCES" || err.code === "EPERM") {
      return `This user may not listen on port ${at.port}${at.port < 1024 ? " (ports below 1024 need privileges)" : ""}. Use another port with --port N, e.g. the default 2026.`;
    }
    if (err.code === "EADDRNOTAVAIL") return `--host ${at.host} is not an address of this machine. Use 127.0.0.1 (the default), 0.0.0.0 for every interface, or one of this machine's addresses.`;
  }
  if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN") return `--host ${at.host} does not resolve to an address. Use 127.0.0.1 (the default), 0.0.0.0, or an address or name of this machine.`;
  const why = err.code ? DATA_DIR_WHY[err.code] : undefined;
  if (why && within(at.dataDir, err.path)) {
    return `The data dir ${at.dataDir} cannot be used (${why}). Pass --data-dir PATH with a directory this user can create and write, or fix the one given (\`deerflow doctor --data-dir ${at.dataDir}\` checks it).`;
  }
  if (why && err.path) return `${err.path} cannot be used (${why}). Fix its permissions or free the space, then start again (\`deerflow doctor\` checks the setup).`;
  return undefined;
}

/**
 * `err` as `serve` reports it: with a `Fix:` line. Usage errors (they print
 * the help hint) and typed errors whose code has a fix pass through as they are.
 */
export function withStartupFix(err: unknown, at: ServeTarget): unknown {
  if (err instanceof UsageError || err instanceof FixedError) return err;
  if (err instanceof DeerFlowError && hasKnownFix(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  const fix = (err instanceof Error && !(err instanceof DeerFlowError) ? systemFix(err as SystemError, at) : undefined) ?? "Run `deerflow doctor`: it checks the config, the env vars, the data dir, PostgreSQL and Redis, and says what to change.";
  return new FixedError(message, fix, { cause: err });
}
