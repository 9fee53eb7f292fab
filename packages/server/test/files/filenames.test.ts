import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { dedupeFilename, sanitizeFilename } from "../../src/files/filenames";
import { parseRange } from "../../src/routes/artifacts";

describe("upload filename sanitisation", () => {
  it("keeps base names and rejects traversal, hidden and control-only names", () => {
    expect(sanitizeFilename("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFilename("C:\\Users\\x\\doc.txt")).toBe("doc.txt");
    expect(sanitizeFilename("..")).toBeUndefined();
    expect(sanitizeFilename(".env")).toBeUndefined();
    expect(sanitizeFilename("\u0000\u0007")).toBeUndefined();
    expect(sanitizeFilename("a\nb.md")).toBe("ab.md");
    expect(sanitizeFilename("x".repeat(300))).toBeUndefined();
  });

  it("dedupes with _N suffixes", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dedupe-"));
    fs.writeFileSync(path.join(dir, "a.txt"), "");
    fs.writeFileSync(path.join(dir, "a_1.txt"), "");
    expect(dedupeFilename(dir, "a.txt")).toBe("a_2.txt");
    expect(dedupeFilename(dir, "b")).toBe("b");
    expect(dedupeFilename(dir, "b", new Set(["b"]))).toBe("b_1");
    fs.rmSync(dir, { recursive: true });
  });
});

describe("Range parsing", () => {
  it("handles start-end, open end, suffix and unsatisfiable ranges", () => {
    expect(parseRange("bytes=0-9", 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange("bytes=90-", 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange("bytes=-10", 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange("bytes=0-1048575", 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-0", 0)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-1,5-6", 100)).toBeUndefined();
    expect(parseRange(undefined, 100)).toBeUndefined();
  });
});
