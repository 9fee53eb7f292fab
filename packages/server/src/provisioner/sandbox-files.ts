import path from "node:path";
import {
  globToRegExp,
  grepRegExp,
  IGNORED_DIRS,
  MAX_REMOTE_FILE_BYTES,
  PathAccessError,
  PathMapper,
  PatternMatcher,
  SandboxError,
  VIRTUAL_OUTPUTS,
  VIRTUAL_SKILLS,
  VIRTUAL_UPLOADS,
  VIRTUAL_USER_DATA,
  VIRTUAL_WORKSPACE,
} from "@deerflow-ts/harness";
import type { DirEntry, FileStat, GrepMatch, LimitedResult, MountPoint } from "@deerflow-ts/harness";
import type { BytesExecOptions, BytesExecResult } from "./backend";
import { contentsScript, READ_SCRIPT, SCRIPT_STATUS, STAT_SCRIPT, walkScript, WRITE_SCRIPT } from "./file-scripts";

/** Runs an argv in one sandbox with raw bytes in and out. */
export type BytesExec = (argv: string[], options: BytesExecOptions) => Promise<BytesExecResult>;

const IGNORED = [...IGNORED_DIRS];
const WALK_SCRIPT = walkScript(IGNORED);
const CONTENTS_SCRIPT = contentsScript(IGNORED);
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
const MAX_GREP_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_WALK_BYTES = 16 * 1024 * 1024;
const MAX_GREP_LINE_CHARS = 500;
const FILE_OP_TIMEOUT_MS = 120_000;

/** A mount of a provisioned sandbox: its container path is its virtual path. */
export interface SandboxMountPoint {
  path: string;
  readOnly: boolean;
}

/** The mounts every provisioned sandbox has: user-data (read-only root), its three writable dirs, and the skills (read-only). */
export function standardMounts(extra: readonly SandboxMountPoint[] = []): SandboxMountPoint[] {
  return [
    { path: VIRTUAL_USER_DATA, readOnly: true },
    { path: VIRTUAL_WORKSPACE, readOnly: false },
    { path: VIRTUAL_UPLOADS, readOnly: false },
    { path: VIRTUAL_OUTPUTS, readOnly: false },
    { path: VIRTUAL_SKILLS, readOnly: true },
    ...extra,
  ];
}

function compareRel(a: string, b: string): number {
  const as = a.split("/");
  const bs = b.split("/");
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const c = as[i].localeCompare(bs[i]);
    if (c !== 0) return c;
  }
  return as.length - bs.length;
}

interface WalkEntry {
  rel: string;
  isDir: boolean;
}

/**
 * The file operations of the command API, run inside the sandbox through
 * {@link BytesExec} with the scripts of `file-scripts.ts`. The virtual path
 * is validated here first (absolute, no `..`, an allowed root, not a
 * read-only mount for writes — the same rules and messages as the host
 * tools), then confined to its mount's real path inside the sandbox.
 */
export class SandboxFiles {
  private readonly mapper: PathMapper;

  constructor(
    private readonly exec: BytesExec,
    mounts: readonly SandboxMountPoint[] = standardMounts(),
  ) {
    const points: MountPoint[] = mounts.map((m) => ({ virtual: m.path, host: m.path, readOnly: m.readOnly }));
    this.mapper = new PathMapper(points);
  }

  private locate(p: string, write = false): { virtual: string; root: string } {
    const { virtual, mount } = this.mapper.locate(p);
    if (write && mount.readOnly) throw new PathAccessError(`Access denied: ${virtual} is read-only`);
    return { virtual, root: mount.virtual };
  }

  private async run(script: string, args: string[], options: Partial<BytesExecOptions> & { maxBytes: number }): Promise<BytesExecResult> {
    return this.exec(["/bin/sh", "-c", script, "deerflow-file", ...args], { timeoutMs: FILE_OP_TIMEOUT_MS, ...options });
  }

  /** Turn a script's failure into the error the host tools raise for the same case. */
  private fail(res: BytesExecResult, virtual: string, root: string): never {
    if (res.timedOut) throw new SandboxError(`File operation timed out on ${virtual}`, { code: "file_op_failed" });
    switch (res.exitCode) {
      case SCRIPT_STATUS.rootUnavailable:
        throw new PathAccessError(`Access denied: ${root} is not available`);
      case SCRIPT_STATUS.outside:
        throw new PathAccessError(`Access denied: ${virtual} resolves outside the allowed directories`, { details: { path: virtual } });
      case SCRIPT_STATUS.notFound:
        throw new SandboxError(`File not found: ${virtual}`, { code: "file_not_found" });
      case SCRIPT_STATUS.isDirectory:
        throw new SandboxError(`Path is a directory: ${virtual}`, { code: "is_directory" });
      case SCRIPT_STATUS.notDirectory:
        throw new SandboxError(`Not a directory: ${virtual}`, { code: "not_directory" });
      case SCRIPT_STATUS.tooLarge:
        throw new SandboxError(`File too large: ${virtual}`, { code: "file_too_large" });
      case 153: // SIGXFSZ: the file-size limit of the sandbox
        throw new SandboxError(`File too large: ${virtual}`, { code: "file_too_large" });
    }
    const err = res.stderr.toLowerCase();
    if (err.includes("no space left")) throw new SandboxError(`No space left while writing ${virtual}`, { code: "no_space" });
    if (err.includes("permission denied") || err.includes("read-only file system")) throw new PathAccessError(`Permission denied: ${virtual}`);
    throw new SandboxError(`File operation failed on ${virtual} (status ${res.exitCode})`, { code: "file_op_failed" });
  }

  async readFileBytes(p: string): Promise<Buffer> {
    const { virtual, root } = this.locate(p);
    const res = await this.run(READ_SCRIPT, [root, virtual, String(MAX_REMOTE_FILE_BYTES)], { maxBytes: MAX_REMOTE_FILE_BYTES });
    if (res.overflow) throw new SandboxError(`File too large: ${virtual}`, { code: "file_too_large" });
    if (res.exitCode !== 0) this.fail(res, virtual, root);
    return res.stdout;
  }

  async writeFile(p: string, bytes: Uint8Array, append: boolean): Promise<void> {
    const { virtual, root } = this.locate(p, true);
    if (virtual === root) throw new SandboxError(`Path is a directory: ${virtual}`, { code: "is_directory" });
    const res = await this.run(WRITE_SCRIPT, [root, virtual, append ? "1" : "0"], { stdin: bytes, maxBytes: 4096 });
    if (res.exitCode !== 0) this.fail(res, virtual, root);
  }

  async stat(p: string): Promise<FileStat | null> {
    let loc: { virtual: string; root: string };
    try {
      loc = this.locate(p);
    } catch (err) {
      throw err;
    }
    const res = await this.run(STAT_SCRIPT, [loc.root, loc.virtual], { maxBytes: 4096 });
    if (res.exitCode === SCRIPT_STATUS.notFound || res.exitCode === SCRIPT_STATUS.rootUnavailable) return null;
    if (res.exitCode !== 0) this.fail(res, loc.virtual, loc.root);
    const [kind, size, mtime] = res.stdout.toString("utf8").trim().split(/\s+/);
    return { isFile: kind === "f", isDir: kind === "d", size: Number(size) || 0, mtimeMs: (Number(mtime) || 0) * 1000 };
  }

  private async walk(p: string, maxDepth: number): Promise<{ virtual: string; entries: WalkEntry[]; truncated: boolean }> {
    const { virtual, root } = this.locate(p);
    const res = await this.run(WALK_SCRIPT, [root, virtual, String(maxDepth)], { maxBytes: MAX_WALK_BYTES });
    if (res.exitCode !== 0 && !res.overflow) this.fail(res, virtual, root);
    const parts = res.stdout.toString("utf8").split("\0");
    // A cut stream ends in a partial entry: drop it.
    if (res.overflow || parts[parts.length - 1] !== "") parts.pop();
    const entries: WalkEntry[] = [];
    for (const part of parts) {
      if (part.length < 3) continue;
      entries.push({ isDir: part[0] === "d", rel: part.slice(3) });
    }
    entries.sort((a, b) => compareRel(a.rel, b.rel));
    return { virtual, entries, truncated: res.overflow };
  }

  async listDir(p: string, maxDepth = 2): Promise<DirEntry[]> {
    const { virtual, entries } = await this.walk(p, Math.max(1, maxDepth));
    return entries.map((e) => ({ path: path.posix.join(virtual, e.rel), isDir: e.isDir, depth: e.rel.split("/").length }));
  }

  async glob(p: string, pattern: string, options: { includeDirs?: boolean; maxResults?: number } = {}): Promise<LimitedResult<string>> {
    const { virtual, entries } = await this.walk(p, 0);
    const max = options.maxResults ?? 200;
    const re = globToRegExp(pattern.replace(/^\.\//, ""));
    const candidates = entries.filter((e) => options.includeDirs || !e.isDir).map((e) => e.rel);
    const matcher = new PatternMatcher(re.source, re.flags, pattern);
    try {
      const hits = await matcher.match(candidates, max + 1);
      return { items: hits.slice(0, max).map((i) => path.posix.join(virtual, candidates[i])), truncated: hits.length > max };
    } finally {
      await matcher.close();
    }
  }

  async grep(
    p: string,
    pattern: string,
    options: { glob?: string; literal?: boolean; caseSensitive?: boolean; maxResults?: number } = {},
  ): Promise<LimitedResult<GrepMatch>> {
    const { virtual, root } = this.locate(p);
    const max = options.maxResults ?? 100;
    const regex = grepRegExp(pattern, options);
    const res = await this.run(CONTENTS_SCRIPT, [root, virtual, String(MAX_GREP_FILE_BYTES)], { maxBytes: MAX_GREP_TOTAL_BYTES });
    if (res.exitCode !== 0 && !res.overflow) this.fail(res, virtual, root);
    let files = parseFrames(res.stdout).map((f) => {
      const single = !f.path.startsWith("./");
      const rel = single ? path.posix.basename(f.path) : f.path.slice(2);
      return { virtual: single ? virtual : path.posix.join(virtual, rel), rel, name: path.posix.basename(rel), bytes: f.bytes };
    });
    files.sort((a, b) => compareRel(a.rel, b.rel));
    const matcher = new PatternMatcher(regex.source, regex.flags, pattern);
    try {
      if (options.glob && files.length > 1) {
        const g = globToRegExp(options.glob);
        const filter = new PatternMatcher(g.source, g.flags, options.glob);
        try {
          const byRel = new Set(await filter.match(files.map((f) => f.rel)));
          const byName = new Set(await filter.match(files.map((f) => f.name)));
          files = files.filter((_, i) => byRel.has(i) || byName.has(i));
        } finally {
          await filter.close();
        }
      }
      const items: GrepMatch[] = [];
      for (const f of files) {
        if (f.bytes.subarray(0, 8192).includes(0)) continue;
        const lines = f.bytes.toString("utf8").split(/\r?\n/);
        for (const i of await matcher.match(lines, max - items.length + 1)) {
          if (items.length >= max) return { items, truncated: true };
          const text = lines[i].length > MAX_GREP_LINE_CHARS ? `${lines[i].slice(0, MAX_GREP_LINE_CHARS)}…` : lines[i];
          items.push({ path: f.virtual, line: i + 1, text });
        }
      }
      return { items, truncated: res.overflow };
    } finally {
      await matcher.close();
    }
  }
}

/** Split `path\0size\0<bytes>` frames; a cut last frame is dropped. */
function parseFrames(buf: Buffer): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  let pos = 0;
  while (pos < buf.length) {
    const a = buf.indexOf(0, pos);
    if (a < 0) break;
    const b = buf.indexOf(0, a + 1);
    if (b < 0) break;
    const size = Number(buf.subarray(a + 1, b).toString("ascii"));
    if (!Number.isInteger(size) || size < 0 || b + 1 + size > buf.length) break;
    out.push({ path: buf.subarray(pos, a).toString("utf8"), bytes: buf.subarray(b + 1, b + 1 + size) });
    pos = b + 1 + size;
  }
  return out;
}
