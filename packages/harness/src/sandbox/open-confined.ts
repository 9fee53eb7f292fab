import { constants as FS } from "node:fs";
import { open, readlink } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";

/** Whether `child` is `root` or below it (both absolute and resolved). */
export function isInsideDir(child: string, root: string): boolean {
  return child === root || child.startsWith(root.endsWith(path.sep) ? root : `${root}${path.sep}`);
}

/**
 * Open a file the agent's sandbox can change under us, confined to
 * `rootReal`: the final component is not followed (`O_NOFOLLOW`), and the
 * opened descriptor's real path (`/proc/self/fd`) is checked again, so a
 * directory swapped for a symlink after the caller's path check cannot lead
 * the open outside. Errors of `open` itself are the caller's to translate;
 * a descriptor outside `rootReal` is closed and `outside()` is thrown.
 * Returns the handle and its real path (undefined where there is no /proc:
 * the caller's own realpath check is then what there is).
 */
export async function openConfinedFile(
  hostPath: string,
  rootReal: string,
  flags: number,
  outside: () => Error,
  mode = 0o644,
): Promise<{ handle: FileHandle; actual?: string }> {
  const handle = await open(hostPath, flags | FS.O_NOFOLLOW, mode);
  let actual: string | undefined;
  try {
    actual = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    // no /proc (not Linux)
  }
  if (actual !== undefined && !isInsideDir(actual, rootReal)) {
    await handle.close();
    throw outside();
  }
  return { handle, actual };
}
