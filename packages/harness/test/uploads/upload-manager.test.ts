import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { threadPaths, UploadError, UploadManager, uploadListResponseSchema, uploadResponseSchema } from "../../src/uploads";

function setup() {
  const base = mkdtempSync(path.join(tmpdir(), "df-up-"));
  return { base, paths: threadPaths(base, "default", "thread-1") };
}

describe("UploadManager", () => {
  it("saves files with the documented UploadedFileInfo shape", async () => {
    const { base, paths } = setup();
    const m = new UploadManager();
    const r = await m.save(paths, [{ filename: "report.txt", data: "hello" }, { filename: "données é.csv", data: Buffer.from("a,b\n") }]);
    expect(uploadResponseSchema.strict().parse(r)).toBeTruthy();
    expect(r.success).toBe(true);
    expect(r.skipped_files).toEqual([]);
    const f = r.files[0];
    expect(f).toMatchObject({
      filename: "report.txt",
      size: 5,
      // never the host path: responses go to clients
      path: "/mnt/user-data/uploads/report.txt",
      virtual_path: "/mnt/user-data/uploads/report.txt",
      artifact_url: "/api/threads/thread-1/artifacts/mnt/user-data/uploads/report.txt",
      extension: ".txt",
    });
    expect(typeof f.modified).toBe("number");
    expect(Math.abs(f.modified! - Date.now() / 1000)).toBeLessThan(60);
    expect(r.files[1].artifact_url).toBe(`/api/threads/thread-1/artifacts/mnt/user-data/uploads/${encodeURIComponent("données é.csv")}`);
    expect(readFileSync(path.join(base, "users/default/threads/thread-1/user-data/uploads/report.txt"), "utf8")).toBe("hello");
  });

  it("sanitises names: basename only, control chars stripped, NFC, hidden/empty/dot names skipped", async () => {
    const { paths } = setup();
    const m = new UploadManager();
    const decomposed = "cafe\u0301.txt"; // e + combining acute
    const r = await m.save(paths, [
      { filename: "../../etc/passwd", data: "x" },
      { filename: "C:\\Users\\me\\evil.txt", data: "x" },
      { filename: "bad\u0000\u0007name.txt", data: "x" },
      { filename: decomposed, data: "x" },
      { filename: ".bashrc", data: "x" },
      { filename: "..", data: "x" },
      { filename: "dir/", data: "x" },
      { filename: "   ", data: "x" },
    ]);
    expect(r.files.map((f) => f.filename)).toEqual(["passwd", "evil.txt", "badname.txt", "caf\u00e9.txt"]);
    expect(r.skipped_files).toEqual([".bashrc", "..", "dir/", "   "]);
    expect(readdirSync(paths.uploads).sort()).toEqual(["badname.txt", "caf\u00e9.txt", "evil.txt", "passwd"]);
    expect(r.files[0].original_filename).toBe("../../etc/passwd");
  });

  it("gives duplicate names in one request _N suffixes and replaces an existing file", async () => {
    const { paths } = setup();
    const m = new UploadManager();
    await m.save(paths, [{ filename: "a.txt", data: "old" }]);
    const r = await m.save(paths, [{ filename: "a.txt", data: "1" }, { filename: "a.txt", data: "2" }, { filename: "a.txt", data: "3" }, { filename: "noext", data: "4" }, { filename: "noext", data: "5" }]);
    expect(r.files.map((f) => f.filename)).toEqual(["a.txt", "a_1.txt", "a_2.txt", "noext", "noext_1"]);
    expect(readFileSync(path.join(paths.uploads, "a.txt"), "utf8")).toBe("1");
    expect(readFileSync(path.join(paths.uploads, "a_2.txt"), "utf8")).toBe("3");
  });

  it("enforces max_files, max_file_size and max_total_size with 413 errors and leaves nothing behind", async () => {
    const { paths } = setup();
    const m = new UploadManager({ max_files: 2, max_file_size: 10, max_total_size: 15 });
    const many = [1, 2, 3].map((i) => ({ filename: `f${i}.txt`, data: "x" }));
    await expect(m.save(paths, many)).rejects.toMatchObject({ code: "upload_too_many_files", status: 413 });
    await expect(m.save(paths, [{ filename: "big.bin", data: Buffer.alloc(11) }])).rejects.toMatchObject({ code: "upload_file_too_large", status: 413 });
    await expect(m.save(paths, [{ filename: "a", data: Buffer.alloc(8) }, { filename: "b", data: Buffer.alloc(8) }])).rejects.toMatchObject({ code: "upload_total_too_large" });
    // streams of unknown size are counted while writing; the partial staging file is removed
    async function* chunks() {
      yield Buffer.alloc(6);
      yield Buffer.alloc(6);
    }
    await expect(m.save(paths, [{ filename: "s.bin", stream: chunks() }])).rejects.toBeInstanceOf(UploadError);
    mkdirSync(paths.uploads, { recursive: true });
    expect(readdirSync(paths.uploads)).toEqual([]);
    expect(new UploadManager().limits).toEqual({ max_files: 10, max_file_size: 52428800, max_total_size: 104857600 });
  });

  it("copies host files by path and rejects a missing source with a readable error", async () => {
    const { base, paths } = setup();
    const src = path.join(base, "in.md");
    writeFileSync(src, "# hi");
    const m = new UploadManager();
    const r = await m.save(paths, [{ filename: "in.md", sourcePath: src }]);
    expect(r.files[0].size).toBe(4);
    await expect(m.save(paths, [{ filename: "x", sourcePath: path.join(base, "nope") }])).rejects.toThrow(/Cannot read/);
  });

  it("lists files sorted, hiding staging .upload-*.part files, dot files and directories", async () => {
    const { paths } = setup();
    const m = new UploadManager();
    expect(await m.list(paths)).toEqual({ files: [], count: 0 });
    await m.save(paths, [{ filename: "b.txt", data: "b" }, { filename: "a.txt", data: "a" }]);
    writeFileSync(path.join(paths.uploads, ".upload-deadbeef.part"), "partial");
    writeFileSync(path.join(paths.uploads, ".hidden"), "h");
    mkdirSync(path.join(paths.uploads, "sub"));
    const l = await m.list(paths);
    expect(uploadListResponseSchema.strict().parse(l)).toBeTruthy();
    expect(l.files.map((f) => f.filename)).toEqual(["a.txt", "b.txt"]);
    expect(l.count).toBe(2);
  });

  it("deletes a file and its converted .md companion; rejects traversal and missing names", async () => {
    const { paths } = setup();
    const m = new UploadManager();
    await m.save(paths, [{ filename: "doc.pdf", data: "%PDF" }, { filename: "doc.md", data: "converted" }, { filename: "keep.txt", data: "k" }]);
    expect(await m.delete(paths, "doc.pdf")).toEqual({ success: true, message: "Deleted doc.pdf" });
    expect(readdirSync(paths.uploads)).toEqual(["keep.txt"]);
    await expect(m.delete(paths, "../keep.txt")).rejects.toMatchObject({ status: 400 });
    await expect(m.delete(paths, ".hidden")).rejects.toMatchObject({ status: 400 });
    await expect(m.delete(paths, "gone.txt")).rejects.toMatchObject({ status: 404, code: "upload_not_found" });
  });

  it("rejects invalid thread ids before touching the disk", () => {
    expect(() => threadPaths("/tmp", "default", "../x")).toThrow(/Invalid thread id/);
  });
});
