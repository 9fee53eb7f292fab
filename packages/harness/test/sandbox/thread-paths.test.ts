import path from "node:path";
import { describe, expect, it } from "vitest";
import { threadDirs } from "../../src/sandbox";

/** What the directories must be: the plain path.join of the documented layout. */
function expected(base: string, thread: string, user: string) {
  const userData = path.join(path.resolve(base), "users", user, "threads", thread, "user-data");
  return { userData, workspace: path.join(userData, "workspace"), uploads: path.join(userData, "uploads"), outputs: path.join(userData, "outputs") };
}

describe("threadDirs", () => {
  it("is {base}/users/{user}/threads/{thread}/user-data/… for absolute, trailing-slash, relative and root bases", () => {
    for (const base of ["/srv/deer-flow/data", "/srv/deer-flow/data/", "/srv//deer-flow/./data", "relative/data", ".", "/"]) {
      expect(threadDirs(base, "t-1", "u_1")).toEqual(expected(base, "t-1", "u_1"));
      // asked again (the resolved base is cached for absolute bases)
      expect(threadDirs(base, "t-2", "u_1")).toEqual(expected(base, "t-2", "u_1"));
    }
  });

  it("refuses ids that are not one safe path segment", () => {
    for (const bad of ["..", "a/b", "", "x".repeat(65), "a\\b", "a b"]) {
      expect(() => threadDirs("/data", bad)).toThrow(/Invalid thread id/);
      expect(() => threadDirs("/data", "t", bad)).toThrow(/Invalid user id/);
    }
  });
});
