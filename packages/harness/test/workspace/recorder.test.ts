import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { threadDirs } from "../../src/sandbox";
import type { ThreadDirs } from "../../src/sandbox";
import { createWorkspaceChangesHook, readRunWorkspaceChanges, recordRunWorkspace, unifiedDiff, workspaceChangesDir } from "../../src/workspace";

let base: string;
let dirs: ThreadDirs;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "ws-changes-"));
  dirs = threadDirs(base, "t1", "u1");
  for (const d of [dirs.outputs, dirs.workspace, dirs.uploads]) fs.mkdirSync(d, { recursive: true });
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

const write = (p: string, text: string | Buffer) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
};

describe("unifiedDiff", () => {
  it("formats hunks like a classic unified diff (3 lines of context, one-line ranges without length)", () => {
    expect(unifiedDiff("/mnt/user-data/outputs/a.md", "", "hello\n").diff).toBe("--- a/mnt/user-data/outputs/a.md\n+++ b/mnt/user-data/outputs/a.md\n@@ -0,0 +1 @@\n+hello");
    const d = unifiedDiff("/x", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n");
    expect(d).toEqual({ diff: "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8", additions: 1, deletions: 1 });
    expect(unifiedDiff("/x", "same\n", "same").diff).toBe("");
  });
});

describe("recordRunWorkspace", () => {
  it("reports files a run created, modified and deleted in outputs and workspace, with diffs", async () => {
    write(path.join(dirs.workspace, "notes.txt"), "line 1\nline 2\n");
    write(path.join(dirs.outputs, "old.md"), "obsolete\n");
    write(path.join(dirs.uploads, "in.txt"), "uploads are not tracked\n");
    await recordRunWorkspace(dirs, "run-1", "start");
    write(path.join(dirs.outputs, "report.md"), "# Report\n\nDone.\n");
    write(path.join(dirs.workspace, "notes.txt"), "line 1\nline two\n");
    fs.rmSync(path.join(dirs.outputs, "old.md"));
    write(path.join(dirs.outputs, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    write(path.join(dirs.workspace, ".env"), "API_KEY=secret\n");
    write(path.join(dirs.workspace, "node_modules", "x.js"), "ignored\n");
    fs.writeFileSync(path.join(dirs.uploads, "in.txt"), "changed upload\n");
    const result = await recordRunWorkspace(dirs, "run-1", "end");
    expect(result!.summary).toEqual({ created: 3, modified: 1, deleted: 1, symlink_created: 0, additions: 4, deletions: 2, truncated: false });

    const res = readRunWorkspaceChanges(dirs, "run-1", { includeFiles: true, includeDiff: true });
    expect(res.available).toBe(true);
    const byPath = Object.fromEntries(res.files.map((f) => [f.path, f]));
    expect(Object.keys(byPath)).toEqual([
      "/mnt/user-data/outputs/img.png",
      "/mnt/user-data/outputs/old.md",
      "/mnt/user-data/outputs/report.md",
      "/mnt/user-data/workspace/.env",
      "/mnt/user-data/workspace/notes.txt",
    ]);
    expect(byPath["/mnt/user-data/outputs/report.md"]).toMatchObject({ status: "created", root: "outputs", size_before: null, size_after: 16, additions: 3, deletions: 0 });
    expect(byPath["/mnt/user-data/outputs/report.md"].sha256_after).toMatch(/^[0-9a-f]{64}$/);
    expect(byPath["/mnt/user-data/workspace/notes.txt"]).toMatchObject({ status: "modified", root: "workspace", additions: 1, deletions: 1 });
    expect(byPath["/mnt/user-data/workspace/notes.txt"].diff).toContain("-line 2\n+line two");
    expect(byPath["/mnt/user-data/outputs/old.md"]).toMatchObject({ status: "deleted", size_after: null, deletions: 1 });
    expect(byPath["/mnt/user-data/outputs/img.png"]).toMatchObject({ binary: true, diff: "", diff_unavailable_reason: "binary" });
    expect(byPath["/mnt/user-data/workspace/.env"]).toMatchObject({ sensitive: true, diff: "", diff_unavailable_reason: "sensitive", sha256_after: null });

    const noDiff = readRunWorkspaceChanges(dirs, "run-1", { includeFiles: true, includeDiff: false });
    expect(noDiff.files.every((f) => f.diff === "")).toBe(true);
    expect(readRunWorkspaceChanges(dirs, "run-1", { includeFiles: false }).files).toEqual([]);
    // snapshots live beside user-data, never inside it
    expect(workspaceChangesDir(dirs).startsWith(dirs.userData)).toBe(false);
  });

  it("answers unavailable for a run with no recorded end, and records nothing without a start", async () => {
    expect(readRunWorkspaceChanges(dirs, "run-x")).toEqual({ available: false, version: 1, summary: expect.objectContaining({ created: 0 }), files: [], limits: {} });
    expect(await recordRunWorkspace(dirs, "run-x", "end")).toBeUndefined();
  });

  it("a second run reuses the first run's hashes and reports only its own changes; cached texts are collected", async () => {
    write(path.join(dirs.outputs, "a.txt"), "a\n");
    await recordRunWorkspace(dirs, "r1", "start");
    write(path.join(dirs.outputs, "b.txt"), "b\n");
    await recordRunWorkspace(dirs, "r1", "end");
    await recordRunWorkspace(dirs, "r2", "start");
    write(path.join(dirs.outputs, "a.txt"), "a2\n");
    const r2 = await recordRunWorkspace(dirs, "r2", "end");
    expect(r2!.files.map((f) => [f.path, f.status])).toEqual([["/mnt/user-data/outputs/a.txt", "modified"]]);
    expect(r2!.files[0].diff).toContain("-a\n+a2");
    const texts = JSON.parse(fs.readFileSync(path.join(workspaceChangesDir(dirs), "texts.json"), "utf8")) as Record<string, string>;
    expect(Object.values(texts).sort()).toEqual(["a2\n", "b\n"]); // the old text of a.txt is no longer referenced
    expect(readRunWorkspaceChanges(dirs, "r1").files.map((f) => f.path)).toEqual(["/mnt/user-data/outputs/b.txt"]);
  });

  it("records symlinks without following them and honours the file limit", async () => {
    await recordRunWorkspace(dirs, "r1", "start");
    fs.symlinkSync("/etc/passwd", path.join(dirs.outputs, "link"));
    for (let i = 0; i < 5; i++) write(path.join(dirs.workspace, `f${i}.txt`), `${i}\n`);
    const res = await recordRunWorkspace(dirs, "r1", "end", { limits: { max_files: 3 } });
    expect(res!.files[0]).toMatchObject({ path: "/mnt/user-data/outputs/link", status: "symlink_created", symlink: true, symlink_target_after: "/etc/passwd", diff: "" });
    expect(res!.files).toHaveLength(3);
    expect(res!.summary).toMatchObject({ created: 5, symlink_created: 1, truncated: true });
  });
});

describe("the run hook on a thread with no files (the hot path of a plain chat)", () => {
  it("writes nothing, and a finished run there reads as 'no changes'; the first file a run writes is still reported", async () => {
    const hook = createWorkspaceChangesHook({ baseDir: base });
    const run = { runId: "r-empty", threadId: "t1", userId: "u1" };
    await hook.runStarted(run);
    await hook.runFinished(run);
    expect(fs.existsSync(workspaceChangesDir(dirs))).toBe(false);
    expect(readRunWorkspaceChanges(dirs, "r-empty", { runFinished: true })).toMatchObject({ available: true, files: [], summary: { created: 0 } });
    expect(readRunWorkspaceChanges(dirs, "r-empty")).toMatchObject({ available: false });
    const second = { runId: "r-first-file", threadId: "t1", userId: "u1" };
    await hook.runStarted(second);
    write(path.join(dirs.outputs, "a.md"), "# A\n");
    await hook.runFinished(second);
    const changes = readRunWorkspaceChanges(dirs, "r-first-file");
    expect(changes.available).toBe(true);
    expect(changes.files.map((f) => [f.path, f.status])).toEqual([["/mnt/user-data/outputs/a.md", "created"]]);
  });
});
