import { chown, chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_USER_ID, validateId } from "./ids";

/** Virtual root of the thread's data. */
export const VIRTUAL_USER_DATA = "/mnt/user-data";
/** Virtual workspace (cwd of bash). */
export const VIRTUAL_WORKSPACE = "/mnt/user-data/workspace";
/** Virtual uploads directory. */
export const VIRTUAL_UPLOADS = "/mnt/user-data/uploads";
/** Virtual outputs directory (what `present_files` may present). */
export const VIRTUAL_OUTPUTS = "/mnt/user-data/outputs";
/** Default virtual skills root (read-only). */
export const VIRTUAL_SKILLS = "/mnt/skills";

/** Host directories of one thread. */
export interface ThreadDirs {
  /** `{base}/users/{user}/threads/{thread}/user-data` */
  userData: string;
  workspace: string;
  uploads: string;
  outputs: string;
}

/** Owner applied to freshly created thread directories (bwrap uid drop). */
export interface DirOwner {
  uid: number;
  gid: number;
}

/**
 * Host paths of a thread: `{baseDir}/users/{userId}/threads/{threadId}/user-data/{workspace,uploads,outputs}`.
 * Ids are validated (ValidationError); nothing is created here.
 */
export function threadDirs(baseDir: string, threadId: string, userId: string = DEFAULT_USER_ID): ThreadDirs {
  validateId("thread", threadId);
  validateId("user", userId);
  // The ids are single safe path segments (validated above), so plain joins are exact; only the base needs resolving.
  const userData = `${resolvedBase(baseDir)}${path.sep}users${path.sep}${userId}${path.sep}threads${path.sep}${threadId}${path.sep}user-data`;
  return {
    userData,
    workspace: `${userData}${path.sep}workspace`,
    uploads: `${userData}${path.sep}uploads`,
    outputs: `${userData}${path.sep}outputs`,
  };
}

/** Resolved absolute base directories (a relative base is resolved against the cwd each time). */
const resolvedBases = new Map<string, string>();

function resolvedBase(baseDir: string): string {
  let r = resolvedBases.get(baseDir);
  if (r === undefined) {
    r = path.resolve(baseDir);
    // Without a trailing separator, so the joins above never double it (the root is the one exception: '/').
    if (r.length > 1 && r.endsWith(path.sep)) r = r.slice(0, -1);
    if (r === path.sep) r = "";
    if (!path.isAbsolute(baseDir)) return r;
    if (resolvedBases.size >= 64) resolvedBases.clear();
    resolvedBases.set(baseDir, r);
  }
  return r;
}

/**
 * Create the thread's three directories (idempotent). With an `owner`, the
 * three directories are handed to that uid/gid (mode 0700) so an
 * unprivileged sandbox user can write them.
 */
export async function ensureThreadDirs(dirs: ThreadDirs, owner?: DirOwner): Promise<void> {
  for (const dir of [dirs.workspace, dirs.uploads, dirs.outputs]) {
    await mkdir(dir, { recursive: true });
    if (owner) {
      await chown(dir, owner.uid, owner.gid);
      await chmod(dir, 0o700);
    }
  }
}
