import { DEFAULT_USER_ID, threadDirs, VIRTUAL_USER_DATA } from "../sandbox";
import type { ThreadDirs } from "../sandbox";

/** Virtual root of a thread's data as the agent sees it (`/mnt/user-data`). */
export const VIRTUAL_USER_DATA_ROOT = VIRTUAL_USER_DATA;

/** The user id used when auth is off (embedded client, local CLI). */
export const DEFAULT_LOCAL_USER = DEFAULT_USER_ID;

/** Host directories of one thread's data, with the ids they belong to. */
export interface ThreadPaths extends ThreadDirs {
  threadId: string;
  userId: string;
}

/**
 * Host paths of a thread: `{baseDir}/users/{userId}/threads/{threadId}/user-data/{workspace,uploads,outputs}`
 * (the sandbox's layout). Both ids are validated so they can never walk out
 * of `baseDir`. Nothing is created.
 */
export function threadPaths(baseDir: string, userId: string, threadId: string): ThreadPaths {
  return { ...threadDirs(baseDir, threadId, userId), threadId, userId };
}
