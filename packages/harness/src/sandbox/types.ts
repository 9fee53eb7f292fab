/**
 * Sandbox contracts. Every path crossing these interfaces is a VIRTUAL path
 * (`/mnt/user-data/workspace/…`, `/mnt/skills/…`, custom mount paths), so a
 * remote sandbox (Docker, Kubernetes…) can implement them without sharing the
 * host filesystem.
 */

/** Options of {@link Sandbox.executeCommand}. */
export interface ExecuteOptions {
  /** Wall-clock limit; the whole process tree is killed when it expires. */
  timeoutMs?: number;
  /** Extra environment variables (added to the sandbox's allow-listed env). */
  env?: Record<string, string>;
  /** Aborting kills the command like a timeout does. */
  signal?: AbortSignal;
}

/** Result of one command. */
export interface ExecuteResult {
  stdout: string;
  stderr: string;
  /** Exit code; 128+signal when killed by a signal, -1 when it never started. */
  exitCode: number;
  timedOut: boolean;
  /** True when stdout or stderr exceeded the capture cap and bytes were dropped. */
  truncated: boolean;
}

/** One entry of a directory listing. */
export interface DirEntry {
  /** Virtual path. */
  path: string;
  isDir: boolean;
  /** Depth below the listed directory (1 = direct child). */
  depth: number;
}

/** Metadata of a file or directory. */
export interface FileStat {
  isFile: boolean;
  isDir: boolean;
  size: number;
  mtimeMs: number;
}

/** Options of {@link Sandbox.glob}. */
export interface GlobOptions {
  includeDirs?: boolean;
  maxResults?: number;
}

/** Options of {@link Sandbox.grep}. */
export interface GrepOptions {
  /** Only search files whose path (relative to the search root) or basename matches this glob. */
  glob?: string;
  /** Treat `pattern` as a literal string instead of a regular expression. */
  literal?: boolean;
  caseSensitive?: boolean;
  maxResults?: number;
}

/** One grep hit. */
export interface GrepMatch {
  /** Virtual path of the file. */
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

/** A list result that may have been cut at `maxResults`. */
export interface LimitedResult<T> {
  items: T[];
  truncated: boolean;
}

/** Options of {@link Sandbox.writeFile}. */
export interface WriteOptions {
  append?: boolean;
}

/** One per-thread sandbox. Paths are virtual; see the module comment. */
export interface Sandbox {
  /** Stable id, e.g. `local:default:thread-1` or `bwrap:default:thread-1`. */
  readonly id: string;
  /** Provider kind (`local`, `bwrap`, …). */
  readonly kind: string;
  /** True when commands run isolated from the host (namespaces, container, VM). */
  readonly isolated: boolean;
  /** Run a shell command with the workspace as working directory. */
  executeCommand(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;
  /** Read a UTF-8 text file. */
  readFile(path: string): Promise<string>;
  /** Read raw bytes. */
  readFileBytes(path: string): Promise<Uint8Array>;
  /** Write (or append) UTF-8 text, creating parent directories. */
  writeFile(path: string, content: string, options?: WriteOptions): Promise<void>;
  /** Replace a file's bytes (upload sync). */
  updateFile(path: string, bytes: Uint8Array): Promise<void>;
  /** List a directory tree up to `maxDepth` levels (default 2). */
  listDir(path: string, maxDepth?: number): Promise<DirEntry[]>;
  /** Find paths under `path` matching a glob pattern. */
  glob(path: string, pattern: string, options?: GlobOptions): Promise<LimitedResult<string>>;
  /** Search file contents under `path` (a file or a directory tree). */
  grep(path: string, pattern: string, options?: GrepOptions): Promise<LimitedResult<GrepMatch>>;
  /** Metadata, or `null` when the path does not exist. */
  stat(path: string): Promise<FileStat | null>;
  exists(path: string): Promise<boolean>;
  /** Replace any host path in `text` by its virtual path (identity for remote sandboxes). */
  maskPaths(text: string): string;
}

/** Options of {@link SandboxProvider.acquire}. */
export interface AcquireOptions {
  /** Owner of the thread (defaults to `default`). */
  userId?: string;
}

/**
 * Creates and tracks sandboxes. `acquire` is idempotent per (user, thread)
 * and takes a lease; `release` drops one lease. A sandbox is torn down only
 * when its last lease is released, so a sub-agent still running keeps it
 * alive after the lead run ends.
 */
export interface SandboxProvider {
  /** Provider kind (`local`, `bwrap`, `docker`, `remote`). */
  readonly kind: string;
  acquire(threadId: string, options?: AcquireOptions): Promise<string>;
  /** The live sandbox with this id (in memory only, no I/O). */
  get(id: string): Sandbox | undefined;
  release(id: string): Promise<void>;
  /** Number of leases currently held on `id` (0 when unknown). */
  leaseCount(id: string): number;
  /** Tear every sandbox down (kills running commands). */
  shutdown(): Promise<void>;
  /**
   * The thread was deleted: tear its sandbox down now (container removed,
   * remote sandbox deleted) instead of keeping it warm until the idle
   * timeout. Other threads' sandboxes are untouched. Providers whose
   * sandboxes hold nothing once released (local, bwrap) leave it out.
   */
  discardThread?(threadId: string, options?: AcquireOptions): Promise<void>;
}
