import { constants as FS, type Dirent } from "node:fs";
import { chown, lstat, mkdir, readdir, stat as fsStat } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { PathAccessError, SandboxError } from "../errors";
import { globToRegExp, grepRegExp } from "./glob-match";
import { openConfinedFile } from "./open-confined";
import { PatternMatcher } from "./pattern-worker";
import type { PathMapper, ResolvedPath } from "./path-mapper";
import type { DirOwner } from "./thread-paths";
import type { DirEntry, FileStat, GlobOptions, GrepMatch, GrepOptions, LimitedResult, WriteOptions } from "./types";

/** Directories never descended into by glob/grep and not expanded by ls. */
export const IGNORED_DIRS = new Set([".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"]);

const MAX_WALK_ENTRIES = 100_000;
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
const MAX_GREP_LINE_CHARS = 500;

function isInside(child: string, root: string): boolean {
  return child === root || child.startsWith(`${root}/`);
}

/** Translate a Node fs error into a sandbox error that names only the virtual path. */
export function translateFsError(err: unknown, virtual: string): Error {
  if (err instanceof SandboxError) return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "ENOENT":
      return new SandboxError(`File not found: ${virtual}`, { code: "file_not_found" });
    case "EISDIR":
      return new SandboxError(`Path is a directory: ${virtual}`, { code: "is_directory" });
    case "ENOTDIR":
      return new SandboxError(`Not a directory: ${virtual}`, { code: "not_directory" });
    case "EACCES":
    case "EPERM":
      return new PathAccessError(`Permission denied: ${virtual}`);
    case "ELOOP":
      return new PathAccessError(`Access denied: ${virtual} is a symbolic link`);
    case "EFBIG":
      return new SandboxError(`File too large: ${virtual}`, { code: "file_too_large" });
    case "ENOSPC":
      return new SandboxError(`No space left while writing ${virtual}`, { code: "no_space" });
    default:
      return new SandboxError(`File operation failed on ${virtual}${code ? ` (${code})` : ""}`, { code: "file_op_failed" });
  }
}

/** A disk quota host-side writes are checked against (see `limits/disk-quota.ts`). */
export interface WriteQuota {
  /** Host directory the quota covers; writes into mounts below it are checked. */
  readonly root: string;
  /** @throws SandboxError `disk_quota_exceeded` when growing the files under `root` by `delta` bytes is refused. */
  reserve(delta: number, what: string): Promise<void>;
}

/**
 * File operations on host directories behind a {@link PathMapper}. Every
 * path is resolved with symlinks followed and confined to its mount; files
 * are opened with O_NOFOLLOW and the opened descriptor is re-checked through
 * `/proc/self/fd`, so a symlink swapped in after resolution cannot redirect
 * the operation outside the thread roots.
 */
export class HostFileOps {
  constructor(
    private readonly mapper: PathMapper,
    private readonly owner?: DirOwner,
    private readonly quota?: WriteQuota,
  ) {}

  private async openConfined(r: ResolvedPath, flags: number, mode = 0o644): Promise<FileHandle> {
    const outside = () => new PathAccessError(`Access denied: ${r.virtual} resolves outside the allowed directories`);
    try {
      return (await openConfinedFile(r.host, r.rootReal, flags, outside, mode)).handle;
    } catch (err) {
      throw err instanceof PathAccessError ? err : translateFsError(err, r.virtual);
    }
  }

  async readFileBytes(p: string): Promise<Uint8Array> {
    const r = await this.mapper.resolve(p);
    const fh = await this.openConfined(r, FS.O_RDONLY);
    try {
      return await fh.readFile();
    } catch (err) {
      throw translateFsError(err, r.virtual);
    } finally {
      await fh.close();
    }
  }

  async readFile(p: string): Promise<string> {
    return Buffer.from(await this.readFileBytes(p)).toString("utf8");
  }

  private async chownNew(firstCreated: string | undefined, deepest: string): Promise<void> {
    if (!this.owner || !firstCreated) return;
    let dir = deepest;
    const chain: string[] = [];
    while (isInside(dir, firstCreated)) {
      chain.push(dir);
      if (dir === firstCreated) break;
      dir = path.dirname(dir);
    }
    for (const d of chain) await chown(d, this.owner.uid, this.owner.gid);
  }

  private async writeBytes(p: string, data: Uint8Array, append: boolean): Promise<void> {
    const r = await this.mapper.resolve(p, { write: true });
    const parent = path.dirname(r.host);
    try {
      const created = await mkdir(parent, { recursive: true });
      await this.chownNew(created, parent);
    } catch (err) {
      throw translateFsError(err, path.posix.dirname(r.virtual));
    }
    // Re-resolve after creating parents: confinement is checked on the final real path.
    const r2 = await this.mapper.resolve(p, { write: true });
    const before = await lstat(r2.host).catch(() => undefined);
    const existed = before !== undefined;
    if (this.quota && isInside(r2.mount.host, this.quota.root)) {
      const oldSize = before?.isFile() ? before.size : 0;
      await this.quota.reserve(append ? data.length : data.length - oldSize, r2.virtual);
    }
    const fh = await this.openConfined(r2, FS.O_WRONLY | FS.O_CREAT | (append ? FS.O_APPEND : 0));
    try {
      if (!append) await fh.truncate(0);
      await fh.writeFile(data);
      if (!existed && this.owner) await fh.chown(this.owner.uid, this.owner.gid);
    } catch (err) {
      throw translateFsError(err, r2.virtual);
    } finally {
      await fh.close();
    }
  }

  async writeFile(p: string, content: string, options: WriteOptions = {}): Promise<void> {
    await this.writeBytes(p, Buffer.from(content, "utf8"), options.append === true);
  }

  async updateFile(p: string, bytes: Uint8Array): Promise<void> {
    await this.writeBytes(p, bytes, false);
  }

  async stat(p: string): Promise<FileStat | null> {
    let r: ResolvedPath;
    try {
      r = await this.mapper.resolve(p);
    } catch (err) {
      if (err instanceof PathAccessError) throw err;
      return null;
    }
    try {
      const s = await fsStat(r.host);
      return { isFile: s.isFile(), isDir: s.isDirectory(), size: s.size, mtimeMs: s.mtimeMs };
    } catch {
      return null;
    }
  }

  async exists(p: string): Promise<boolean> {
    return (await this.stat(p)) !== null;
  }

  private async walk(
    r: ResolvedPath,
    maxDepth: number,
    visit: (entry: Dirent, rel: string, depth: number) => boolean | void,
    options: { descendIgnored?: boolean } = {},
  ): Promise<void> {
    let seen = 0;
    const recurse = async (hostDir: string, rel: string, depth: number): Promise<boolean> => {
      let entries: Dirent[];
      try {
        entries = await readdir(hostDir, { withFileTypes: true });
      } catch (err) {
        if (depth === 1) throw translateFsError(err, r.virtual);
        return true;
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const e of entries) {
        if (++seen > MAX_WALK_ENTRIES) return false;
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        if (visit(e, childRel, depth) === false) return false;
        if (e.isDirectory() && depth < maxDepth && (options.descendIgnored || !IGNORED_DIRS.has(e.name))) {
          if (!(await recurse(path.join(hostDir, e.name), childRel, depth + 1))) return false;
        }
      }
      return true;
    };
    await recurse(r.host, "", 1);
  }

  private async resolveDir(p: string): Promise<ResolvedPath> {
    const r = await this.mapper.resolve(p);
    const s = await fsStat(r.host).catch((err) => {
      throw translateFsError(err, r.virtual);
    });
    if (!s.isDirectory()) throw new SandboxError(`Not a directory: ${r.virtual}`, { code: "not_directory" });
    return r;
  }

  async listDir(p: string, maxDepth = 2): Promise<DirEntry[]> {
    const r = await this.resolveDir(p);
    const out: DirEntry[] = [];
    await this.walk(r, Math.max(1, maxDepth), (e, rel, depth) => {
      out.push({ path: path.posix.join(r.virtual, rel), isDir: e.isDirectory(), depth });
    });
    return out;
  }

  async glob(p: string, pattern: string, options: GlobOptions = {}): Promise<LimitedResult<string>> {
    const r = await this.resolveDir(p);
    const max = options.maxResults ?? 200;
    const re = globToRegExp(pattern.replace(/^\.\//, ""));
    const candidates: string[] = [];
    await this.walk(r, Number.MAX_SAFE_INTEGER, (e, rel) => {
      if (e.isDirectory() && !options.includeDirs) return;
      candidates.push(rel);
    });
    // Matched off the event loop: a glob like `*a*a*a*b` backtracks polynomially on long names the agent chose.
    const matcher = new PatternMatcher(re.source, re.flags, pattern);
    try {
      const hits = await matcher.match(candidates, max + 1);
      return { items: hits.slice(0, max).map((i) => path.posix.join(r.virtual, candidates[i])), truncated: hits.length > max };
    } finally {
      await matcher.close();
    }
  }

  async grep(p: string, pattern: string, options: GrepOptions = {}): Promise<LimitedResult<GrepMatch>> {
    const r = await this.mapper.resolve(p);
    const s = await fsStat(r.host).catch((err) => {
      throw translateFsError(err, r.virtual);
    });
    const max = options.maxResults ?? 100;
    const regex = grepRegExp(pattern, options);
    const fileFilter = options.glob ? globToRegExp(options.glob) : undefined;
    let files: Array<{ host: string; virtual: string; rel: string; name: string }> = [];
    if (s.isFile()) {
      files.push({ host: r.host, virtual: r.virtual, rel: path.basename(r.host), name: path.basename(r.host) });
    } else {
      await this.walk(r, Number.MAX_SAFE_INTEGER, (e, rel) => {
        if (!e.isFile()) return;
        files.push({ host: path.join(r.host, rel), virtual: path.posix.join(r.virtual, rel), rel, name: e.name });
      });
    }
    // The model's regex (and glob) run over lines and names the agent wrote: in a worker with a time budget,
    // so a catastrophically backtracking pattern fails this call instead of freezing the gateway.
    const matcher = new PatternMatcher(regex.source, regex.flags, pattern);
    try {
      if (fileFilter && !s.isFile()) {
        const filter = new PatternMatcher(fileFilter.source, fileFilter.flags, options.glob as string);
        try {
          const byRel = new Set(await filter.match(files.map((f) => f.rel)));
          const byName = new Set(await filter.match(files.map((f) => f.name)));
          files = files.filter((_, i) => byRel.has(i) || byName.has(i));
        } finally {
          await filter.close();
        }
      }
      return await this.grepFiles(files, matcher, max);
    } finally {
      await matcher.close();
    }
  }

  private async grepFiles(files: Array<{ host: string; virtual: string }>, matcher: PatternMatcher, max: number): Promise<LimitedResult<GrepMatch>> {
    const items: GrepMatch[] = [];
    for (const f of files) {
      let buf: Buffer;
      try {
        const fr = await this.mapper.resolve(f.virtual);
        const fh = await this.openConfined(fr, FS.O_RDONLY);
        try {
          const st = await fh.stat();
          if (st.size > MAX_GREP_FILE_BYTES) continue;
          buf = await fh.readFile();
        } finally {
          await fh.close();
        }
      } catch {
        continue;
      }
      if (buf.subarray(0, 8192).includes(0)) continue;
      const lines = buf.toString("utf8").split(/\r?\n/);
      for (const i of await matcher.match(lines, max - items.length + 1)) {
        if (items.length >= max) return { items, truncated: true };
        const text = lines[i].length > MAX_GREP_LINE_CHARS ? `${lines[i].slice(0, MAX_GREP_LINE_CHARS)}…` : lines[i];
        items.push({ path: f.virtual, line: i + 1, text });
      }
    }
    return { items, truncated: false };
  }
}
