import fs from "node:fs";
import path from "node:path";

/** The three per-thread directories under `user-data/`. */
export const USER_DATA_DIRS = ["workspace", "uploads", "outputs"] as const;

/** `{baseDir}/users/{user}/threads/{thread}` (the thread's root). */
export function threadRoot(baseDir: string, userId: string, threadId: string): string {
  return path.join(baseDir, "users", userId, "threads", threadId);
}

/** `{threadRoot}/user-data` — what `/mnt/user-data` maps to. */
export function userDataDir(baseDir: string, userId: string, threadId: string): string {
  return path.join(threadRoot(baseDir, userId, threadId), "user-data");
}

/** `{userData}/uploads`, created on demand. */
export function ensureUploadsDir(baseDir: string, userId: string, threadId: string): string {
  const dir = path.join(userDataDir(baseDir, userId, threadId), "uploads");
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Remove all files of a thread (no error when absent). */
export async function removeThreadFiles(baseDir: string, userId: string, threadId: string): Promise<void> {
  await fs.promises.rm(threadRoot(baseDir, userId, threadId), { recursive: true, force: true });
}
