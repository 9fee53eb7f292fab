import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRegularFile } from "../../src/workspace/scanner";

// The workspace scan lstat()s a name and then reads it while the agent's sandbox may be changing the same
// directory. These cases replay that swap in between, deterministically.
describe("workspace scan reads only the file it examined", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "df-scan-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads an unchanged regular file", () => {
    const f = path.join(dir, "a.txt");
    writeFileSync(f, "hello");
    expect(readRegularFile(f, lstatSync(f, { bigint: true }))?.toString()).toBe("hello");
  });

  it("refuses a name swapped for a symlink to a host file after the lstat", () => {
    const f = path.join(dir, "b.txt");
    writeFileSync(f, "mine");
    const st = lstatSync(f, { bigint: true });
    rmSync(f);
    symlinkSync("/etc/hostname", f);
    expect(readRegularFile(f, st)).toBeUndefined();
  });

  it("refuses a name swapped for another file (a different inode) after the lstat", () => {
    const f = path.join(dir, "c.txt");
    writeFileSync(f, "first");
    const st = lstatSync(f, { bigint: true });
    const other = path.join(dir, "other.txt");
    writeFileSync(other, "second");
    renameSync(other, f);
    expect(readRegularFile(f, st)).toBeUndefined();
  });

  it("does not block on a FIFO swapped in after the lstat (a blocking open would hang the event loop)", () => {
    const f = path.join(dir, "d.txt");
    writeFileSync(f, "x");
    const st = lstatSync(f, { bigint: true });
    rmSync(f);
    execFileSync("mkfifo", [f]);
    expect(readRegularFile(f, st)).toBeUndefined();
  });
});
