import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync } from "node:fs";

/** Whether `file` starts with the ELF magic (a binary or shared object `ldd` can describe). */
export function isElf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head[0] === 0x7f && head.toString("latin1", 1, 4) === "ELF";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** What `ldd` reported for a set of ELF files. */
export interface SharedLibraries {
  /** Absolute host paths of every library (and the ELF interpreter) the files load. */
  libraries: string[];
  /** `lib.so => not found` lines: the image would miss these, so the program would not start. */
  notFound: Array<{ file: string; library: string }>;
}

/**
 * The shared-library closure of `files` as the host's dynamic loader resolves it (`ldd` prints the
 * whole closure, not just direct dependencies). Statically linked files contribute nothing.
 * `ldd` is asked only about the host's own installed programs: it may run the file's interpreter.
 */
export function sharedLibraries(files: Iterable<string>, lddPath = "ldd"): SharedLibraries {
  const libraries = new Set<string>();
  const notFound: SharedLibraries["notFound"] = [];
  for (const file of files) {
    if (!isElf(file)) continue;
    const res = spawnSync(lddPath, [file], { encoding: "utf8", timeout: 30_000 });
    if (res.error) throw res.error;
    if (res.status !== 0) continue; // "not a dynamic executable"
    for (const line of res.stdout.split("\n")) {
      const missing = /^\s*(\S+)\s+=>\s+not found/.exec(line);
      if (missing) {
        notFound.push({ file, library: missing[1] });
        continue;
      }
      // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or the interpreter `/lib64/ld-linux-x86-64.so.2 (0x…)`
      const found = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/i.exec(line);
      if (found) libraries.add(found[1]);
    }
  }
  return { libraries: [...libraries].sort(), notFound };
}
