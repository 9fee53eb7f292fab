import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeFileAtomic, writeFileAtomicSync, writeFilesAtomicSync } from "../../src/fs";

const root = mkdtempSync(path.join(tmpdir(), "df-atomic-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => mkdtempSync(path.join(root, `${n++}-`));

/** The syscalls of one write, traced by strace when it is installed (it shows the fsync of the file and of the directory). */
function traced(code: string): string | undefined {
  const probe = spawnSync("strace", ["-V"], { encoding: "utf8" });
  if (probe.status !== 0) return undefined;
  const run = spawnSync("strace", ["-f", "-e", "trace=openat,fsync,rename,renameat,renameat2", process.execPath, "--import", "tsx", "-e", code], {
    encoding: "utf8",
    cwd: path.resolve(__dirname, "../.."),
  });
  return run.status === 0 ? run.stderr : undefined;
}

describe("the shared atomic write", () => {
  it("creates the directory, replaces the file and leaves no temp file behind (sync and async)", async () => {
    const dir = fresh();
    const file = path.join(dir, "sub", "doc.json");
    writeFileAtomicSync(file, "one");
    expect(readFileSync(file, "utf8")).toBe("one");
    await writeFileAtomic(file, "two");
    expect(readFileSync(file, "utf8")).toBe("two");
    expect(readdirSync(path.dirname(file))).toEqual(["doc.json"]);
  });

  it("a failure while writing the temp file or renaming keeps the old file and removes the temp file", () => {
    const dir = fresh();
    const file = path.join(dir, "memory.json");
    writeFileAtomicSync(file, "old");
    const torn = {
      writeTemp: (tmp: string, data: string | Uint8Array) => {
        writeFileSync(tmp, String(data).slice(0, 2));
        throw new Error("ENOSPC: disk full");
      },
      rename: () => undefined,
    };
    expect(() => writeFileAtomicSync(file, "new content", { steps: torn })).toThrow(/ENOSPC/);
    const brokenRename = { writeTemp: (tmp: string, data: string | Uint8Array) => writeFileSync(tmp, data), rename: () => { throw new Error("EIO"); } };
    expect(() => writeFileAtomicSync(file, "new content", { steps: brokenRename })).toThrow(/EIO/);
    expect(readFileSync(file, "utf8")).toBe("old");
    expect(readdirSync(dir)).toEqual(["memory.json"]);
  });

  it("several files are all staged before the first rename: a failed stage changes none of them", () => {
    const dir = fresh();
    const a = path.join(dir, "config.yaml");
    const b = path.join(dir, "SOUL.md");
    writeFilesAtomicSync([{ file: a, data: "a1" }, { file: b, data: "b1" }]);
    let writes = 0;
    const failSecond = {
      writeTemp: (tmp: string, data: string | Uint8Array) => {
        if (++writes === 2) throw new Error("EIO on the second file");
        writeFileSync(tmp, data);
      },
      rename: () => {
        throw new Error("must not rename before every file is staged");
      },
    };
    expect(() => writeFilesAtomicSync([{ file: a, data: "a2" }, { file: b, data: "b2" }], { steps: failSecond })).toThrow(/second file/);
    expect([readFileSync(a, "utf8"), readFileSync(b, "utf8")]).toEqual(["a1", "b1"]);
    expect(readdirSync(dir).sort()).toEqual(["SOUL.md", "config.yaml"]);
  });

  it("honours the mode (files holding secrets are 0600)", async () => {
    const dir = fresh();
    writeFileAtomicSync(path.join(dir, "a.json"), "{}", { mode: 0o600 });
    await writeFileAtomic(path.join(dir, "b.json"), "{}", { mode: 0o600 });
    expect(statSync(path.join(dir, "a.json")).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dir, "b.json")).mode & 0o777).toBe(0o600);
  });

  it("fsyncs the temp file, renames it in the same directory, then fsyncs the directory (strace)", (ctx) => {
    const dir = fresh();
    const file = path.join(dir, "state.json");
    const out = traced(`const { writeFileAtomicSync } = await import("./src/fs/index.ts"); writeFileAtomicSync(${JSON.stringify(file)}, "x");`);
    if (out === undefined) return ctx.skip();
    const lines = out.split("\n");
    const tmpOpen = lines.findIndex((l) => l.includes("openat") && l.includes(`${dir}/.state.json.`) && l.includes("O_CREAT"));
    const rename = lines.findIndex((l) => /rename/.test(l) && l.includes(`${dir}/.state.json.`) && l.includes(`"${file}"`));
    const dirOpen = lines.findIndex((l, i) => i > rename && l.includes("openat") && l.includes(`"${dir}"`));
    const fsyncs = lines.map((l, i) => (/fsync\(/.test(l) ? i : -1)).filter((i) => i >= 0);
    expect(tmpOpen).toBeGreaterThanOrEqual(0);
    expect(rename).toBeGreaterThan(tmpOpen);
    expect(fsyncs.some((i) => i > tmpOpen && i < rename)).toBe(true);
    expect(dirOpen).toBeGreaterThan(rename);
    expect(fsyncs.some((i) => i > dirOpen)).toBe(true);
  });

  it("durable: false still replaces atomically but issues no fsync (strace)", (ctx) => {
    const dir = fresh();
    const file = path.join(dir, "latest.json");
    const out = traced(`const { writeFileAtomicSync } = await import("./src/fs/index.ts"); writeFileAtomicSync(${JSON.stringify(file)}, "x", { durable: false });`);
    if (out === undefined) return ctx.skip();
    const lines = out.split("\n");
    const rename = lines.findIndex((l) => /rename/.test(l) && l.includes(`"${file}"`));
    expect(rename).toBeGreaterThanOrEqual(0);
    const tmpOpen = lines.findIndex((l) => l.includes("openat") && l.includes(`${dir}/.latest.json.`));
    expect(lines.slice(tmpOpen).filter((l) => /fsync\(/.test(l))).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe("x");
  });
});
