/**
 * The one way this harness replaces a file: write a temp file in the same
 * directory, fsync it, rename it over the target, fsync the directory. A
 * reader sees the old file or the new one, never half of one, and after the
 * call returns the new file survives a power loss (the rename is recorded in
 * the directory, the bytes are on disk). Every writer of state that must not
 * tear (memory.json, custom agents, skill states, extensions_config.json,
 * workspace snapshots, uploads) goes through here, so they cannot drift apart
 * again. The one exception is spelled out by its caller: `durable: false`
 * keeps the temp-file-and-rename (no torn file) but skips both fsyncs, for
 * scratch files that the next scan rebuilds and that are written on every
 * run, where an fsync (~5 ms each on a plain ext4 disk) would slow every run.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";

/** The two steps that can fail half-way (replaceable in tests to simulate a crash; the temp file is removed either way). */
export interface AtomicWriteSteps {
  /** Create `tmp` with `mode`, write `data` completely and fsync it. */
  writeTemp(tmp: string, data: string | Uint8Array, mode: number): void;
  rename(from: string, to: string): void;
}

/** Options of {@link writeFileAtomicSync} and {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Permission bits of the new file before the umask (default 0o666, as `writeFileSync`; files holding secrets pass 0o600). */
  mode?: number;
  /**
   * `false`: still atomic (temp file and rename), but neither the file nor the
   * directory is fsynced. Only for derived scratch state that is rewritten on
   * every run and rebuilt when lost; everything a user or an operator wrote
   * keeps the default.
   */
  durable?: boolean;
  /** Fault-injection seam for tests (sync writes only). */
  steps?: AtomicWriteSteps;
}

const DEFAULT_MODE = 0o666;

/** A temp name next to `file`: hidden, unique per process and call, recognisable by its `.tmp` suffix. */
export function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

function stepsFor(durable: boolean): AtomicWriteSteps {
  return durable ? realSteps : scratchSteps;
}

const realSteps: AtomicWriteSteps = {
  writeTemp(tmp, data, mode) {
    const fd = openSync(tmp, "wx", mode);
    try {
      writeAll(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
  rename: renameSync,
};

const scratchSteps: AtomicWriteSteps = {
  writeTemp(tmp, data, mode) {
    const fd = openSync(tmp, "wx", mode);
    try {
      writeAll(fd, data);
    } finally {
      closeSync(fd);
    }
  },
  rename: renameSync,
};

/**
 * fsync a directory, so a rename or create inside it is durable. Filesystems
 * that cannot sync a directory (EINVAL/EISDIR/EPERM on some network or
 * virtual filesystems) are accepted: there is nothing more to do there.
 */
export function syncDirSync(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch (err) {
    if (!isUnsupportedSync(err)) throw err;
  } finally {
    closeSync(fd);
  }
}

/** Async {@link syncDirSync}. */
export async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch (err) {
    if (!isUnsupportedSync(err)) throw err;
  } finally {
    await handle.close();
  }
}

/** fsync an already written file (a staged upload part) before it is renamed into place. */
export async function syncFile(file: string): Promise<void> {
  const handle = await open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isUnsupportedSync(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === "EINVAL" || code === "EISDIR" || code === "EPERM" || code === "ENOTSUP";
}

/** Replace `file` atomically and durably (see the module comment); the parent directory is created when missing. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  writeFilesAtomicSync([{ file, data }], options);
}

/**
 * Replace several files: every one is staged (written and fsynced) before the
 * first rename, so a failure while writing changes none of them. The renames
 * then run in order; they are not one transaction (a crash between two
 * renames leaves the first replaced and the second not).
 */
export function writeFilesAtomicSync(files: ReadonlyArray<{ file: string; data: string | Uint8Array }>, options: AtomicWriteOptions = {}): void {
  const durable = options.durable !== false;
  const steps = options.steps ?? stepsFor(durable);
  const mode = options.mode ?? DEFAULT_MODE;
  const staged: Array<{ tmp: string; file: string }> = [];
  try {
    for (const { file, data } of files) {
      mkdirSync(path.dirname(file), { recursive: true });
      const tmp = tempPathFor(file);
      staged.push({ tmp, file });
      steps.writeTemp(tmp, data, mode);
    }
    while (staged.length) {
      steps.rename(staged[0].tmp, staged[0].file);
      staged.shift();
    }
  } finally {
    for (const { tmp } of staged) rmSync(tmp, { force: true });
  }
  if (durable) for (const dir of new Set(files.map((f) => path.dirname(f.file)))) syncDirSync(dir);
}

/** Async {@link writeFileAtomicSync} (same policy; no fault-injection seam). */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: Omit<AtomicWriteOptions, "steps"> = {}): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const tmp = tempPathFor(file);
  try {
    const handle = await open(tmp, "wx", options.mode ?? DEFAULT_MODE);
    try {
      await handle.writeFile(data);
      if (options.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  if (options.durable !== false) await syncDir(dir);
}
