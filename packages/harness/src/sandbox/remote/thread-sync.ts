import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../../errors";
import { HostFileOps } from "../host-fs";
import { PathMapper } from "../path-mapper";
import { VIRTUAL_OUTPUTS, VIRTUAL_UPLOADS } from "../thread-paths";
import type { ThreadDirs } from "../thread-paths";
import type { Sandbox } from "../types";
import { MAX_REMOTE_FILE_BYTES } from "./wire";

/** Files synced per direction at most (a bound on one acquire/release). */
const MAX_SYNC_FILES = 2000;

/**
 * Keeps a remote sandbox's copy of the thread's uploads and the server's copy
 * of its outputs in step when the two do not share storage
 * (`thread_data_mounts: false`): uploads are pushed with `updateFile` when a
 * run takes the sandbox, outputs are pulled back into the thread's host
 * directory when the last lease ends (so artifacts are served as usual).
 * Host writes go through the confined host file operations (no symlink
 * escapes). Only files that changed since the last sync are copied.
 */
export class ThreadSync {
  private readonly pushed = new Map<string, string>();
  private readonly pulled = new Map<string, string>();
  private readonly host: HostFileOps;

  constructor(
    private readonly dirs: ThreadDirs,
    private readonly sandbox: Sandbox,
  ) {
    this.host = new HostFileOps(
      new PathMapper([
        { virtual: VIRTUAL_UPLOADS, host: dirs.uploads, readOnly: true },
        { virtual: VIRTUAL_OUTPUTS, host: dirs.outputs, readOnly: false },
      ]),
    );
  }

  /** Push new or changed host uploads into the sandbox. Returns how many files were sent. */
  async pushUploads(): Promise<number> {
    let sent = 0;
    for (const rel of await listHostFiles(this.dirs.uploads)) {
      const st = await lstat(path.join(this.dirs.uploads, rel)).catch(() => undefined);
      if (!st?.isFile() || st.size > MAX_REMOTE_FILE_BYTES) continue;
      const stamp = `${st.size}:${st.mtimeMs}`;
      if (this.pushed.get(rel) === stamp) continue;
      const virtual = path.posix.join(VIRTUAL_UPLOADS, rel);
      await this.sandbox.updateFile(virtual, await this.host.readFileBytes(virtual));
      this.pushed.set(rel, stamp);
      sent++;
    }
    return sent;
  }

  /** Pull new or changed sandbox outputs into the thread's host outputs directory. Returns how many files were copied. */
  async pullOutputs(): Promise<number> {
    let entries;
    try {
      entries = await this.sandbox.listDir(VIRTUAL_OUTPUTS, 32);
    } catch (err) {
      if (err instanceof SandboxError && (err.code === "file_not_found" || err.code === "not_directory")) return 0;
      throw err;
    }
    let copied = 0;
    for (const e of entries.filter((x) => !x.isDir).slice(0, MAX_SYNC_FILES)) {
      const st = await this.sandbox.stat(e.path);
      if (!st?.isFile || st.size > MAX_REMOTE_FILE_BYTES) continue;
      const stamp = `${st.size}:${st.mtimeMs}`;
      if (this.pulled.get(e.path) === stamp) continue;
      await this.host.updateFile(e.path, await this.sandbox.readFileBytes(e.path));
      this.pulled.set(e.path, stamp);
      copied++;
    }
    return copied;
  }
}

/** Regular files below `root` as relative paths (symlinks are not followed or copied). */
async function listHostFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (out.length >= MAX_SYNC_FILES) return;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path.join(dir, e.name), childRel);
      else if (e.isFile()) out.push(childRel);
    }
  };
  await walk(root, "");
  return out;
}
