import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SandboxError } from "../../errors";
import { sharedLibraries } from "./elf-deps";

/**
 * A root filesystem assembled from this host's own programs and the libraries they load, for a
 * sandbox image built without any registry: `docker import` turns the directory into an image.
 * The same binaries the host runs are what the sandbox runs, so it carries no distribution of its
 * own and nothing to download.
 */

/** Programs the host-built image carries when the host has them (a missing one is reported, not fatal). */
export const DEFAULT_HOST_PROGRAMS: readonly string[] = [
  // shells (sh is the one the provider needs; the rest are what agents' commands expect)
  "sh", "dash", "bash",
  // coreutils
  "ls", "cat", "cp", "mv", "rm", "mkdir", "rmdir", "ln", "chmod", "touch", "head", "tail", "wc", "sort", "uniq",
  "cut", "tr", "tee", "env", "echo", "printf", "pwd", "date", "sleep", "true", "false", "test", "[", "basename",
  "dirname", "readlink", "realpath", "stat", "du", "df", "id", "whoami", "mktemp", "seq", "yes", "nproc", "uname",
  "timeout", "md5sum", "sha256sum", "base64", "comm", "paste", "split", "expr", "nl", "od", "dd", "install",
  "xargs", "find", "grep", "egrep", "fgrep", "sed", "awk", "diff", "cmp", "patch", "tar", "gzip", "gunzip", "zcat",
  "xz", "bzip2", "unzip", "zip", "file", "ps", "kill", "which", "jq", "curl", "wget", "git", "make",
  // python
  "python3", "pip3", "pip",
];

/** Extra host files a program needs at run time beyond its libraries (data files it opens by path). */
const PROGRAM_DATA: Record<string, readonly string[]> = {
  file: ["/usr/lib/file/magic.mgc", "/usr/share/misc/magic.mgc", "/etc/magic"],
  git: ["/usr/share/git-core/templates"],
  curl: ["/etc/ssl/certs/ca-certificates.crt"],
  wget: ["/etc/ssl/certs/ca-certificates.crt"],
};

/** Where programs are looked up, in order (never the caller's PATH: a shim from a version manager is no program). */
export const HOST_PROGRAM_DIRS: readonly string[] = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

/** Top-level entries of Python's standard library left out: test suites, GUI toolkits, the static libpython. */
const PYTHON_STDLIB_SKIP = /^(test|tests|idlelib|tkinter|turtledemo|site-packages|dist-packages|config-.*)$/;

/** The login the image declares for its default non-root uid (the provider may map another uid). */
export interface ImageUser {
  name: string;
  uid: number;
  gid: number;
}

/** Options of {@link planHostRootfs}. */
export interface HostRootfsOptions {
  /** Program names to carry (default {@link DEFAULT_HOST_PROGRAMS}). */
  programs?: readonly string[];
  /** Directories searched for them (default {@link HOST_PROGRAM_DIRS}). */
  searchDirs?: readonly string[];
  /** The non-root account written to /etc/passwd (default `sandbox`, 1000:1000). */
  user?: ImageUser;
}

/** One path of the image and where its content comes from. */
export type RootfsEntry =
  | { kind: "dir"; mode: number }
  | { kind: "file"; source: string; mode: number; size: number; mtimeMs: number }
  | { kind: "symlink"; target: string }
  | { kind: "text"; content: string; mode: number };

/** What {@link planHostRootfs} found: every image path with its source, and what is missing. */
export interface RootfsPlan {
  /** Image path → entry, for every file, directory and link of the image. */
  entries: Map<string, RootfsEntry>;
  /** Program name → the host path it was found at. */
  programs: Record<string, string>;
  /** Requested programs this host does not have. */
  missingPrograms: string[];
  /** Libraries `ldd` could not resolve (the program needing one would fail in the image). */
  missingLibraries: Array<{ file: string; library: string }>;
  /** The Python the image carries (`3.11.2`), or null without one. */
  pythonVersion: string | null;
  /** Total bytes of copied files. */
  bytes: number;
  /**
   * A digest of every entry (host paths, sizes, modification times, link targets, generated
   * text): an unchanged host gives the same key, so an image already built from it is reused.
   */
  contentKey: string;
}

/** Bumped when the layout this module writes changes, so old cached images are not reused. */
const LAYOUT_VERSION = "1";

/**
 * Walk the host for `options.programs`, their shared libraries (`ldd` closure), Python's standard
 * library and pip when present, and the data files some programs open; nothing is copied yet.
 * Every path keeps its host location (links such as /bin → usr/bin are recreated as links).
 * Throws a SandboxError when the host has no `sh`: the provider needs a POSIX shell in the image.
 */
export function planHostRootfs(options: HostRootfsOptions = {}): RootfsPlan {
  const user = options.user ?? { name: "sandbox", uid: 1000, gid: 1000 };
  const searchDirs = options.searchDirs ?? HOST_PROGRAM_DIRS;
  const entries = new Map<string, RootfsEntry>();
  let bytes = 0;

  const ensureDir = (p: string, mode = 0o755): void => {
    if (!entries.has(p)) entries.set(p, { kind: "dir", mode });
  };
  const addFile = (p: string): void => {
    const st = lstatSync(p);
    if (entries.has(p)) return;
    entries.set(p, { kind: "file", source: p, mode: st.mode & 0o7777, size: st.size, mtimeMs: Math.trunc(st.mtimeMs) });
    bytes += st.size;
  };
  const addTree = (dir: string, skip?: RegExp): void => {
    ensureDir(dir);
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      if (skip?.test(d.name)) continue;
      const p = path.join(dir, d.name);
      if (d.isSymbolicLink()) entries.set(p, { kind: "symlink", target: readlinkSync(p) });
      else if (d.isDirectory()) addTree(p);
      else if (d.isFile()) addFile(p);
      // sockets, fifos and devices have no place in an image
    }
  };
  /** Replicate `hostPath` (file or tree), recreating every symbolic link met on the way. */
  const addHostPath = (hostPath: string, skip?: RegExp, depth = 0): string | undefined => {
    if (depth > 40) throw new SandboxError(`Too many symbolic links resolving ${hostPath} for the sandbox image`, { code: "sandbox_image_build_failed" });
    const parts = hostPath.split("/").filter(Boolean);
    let cur = "/";
    for (let i = 0; i < parts.length; i++) {
      const next = path.join(cur, parts[i]);
      let st;
      try {
        st = lstatSync(next);
      } catch {
        return undefined;
      }
      if (st.isSymbolicLink()) {
        const target = readlinkSync(next);
        entries.set(next, { kind: "symlink", target });
        return addHostPath(path.resolve(cur, target, ...parts.slice(i + 1)), skip, depth + 1);
      }
      if (i < parts.length - 1) {
        if (!st.isDirectory()) return undefined;
        ensureDir(next);
        cur = next;
        continue;
      }
      if (st.isDirectory()) addTree(next, skip);
      else if (st.isFile()) addFile(next);
      else return undefined;
      return next;
    }
    return undefined;
  };

  // Programs: the first search dir holding each name wins.
  const programs: Record<string, string> = {};
  const missingPrograms: string[] = [];
  const elfs = new Set<string>();
  for (const name of options.programs ?? DEFAULT_HOST_PROGRAMS) {
    const found = searchDirs.map((d) => path.join(d, name)).find((p) => existsSync(p));
    if (!found) {
      missingPrograms.push(name);
      continue;
    }
    const real = addHostPath(found);
    if (!real) {
      missingPrograms.push(name);
      continue;
    }
    programs[name] = found;
    elfs.add(real);
    for (const data of PROGRAM_DATA[name] ?? []) addHostPath(data);
    // a script's interpreter must come along (pip's `#!/usr/bin/python3`)
  }
  // Merged-/usr hosts link /bin, /sbin, /lib and /lib64 into /usr; the image keeps those links so
  // `/bin/sh` (what the provider runs) and the loader path written into every ELF resolve.
  for (const top of ["/bin", "/sbin", "/lib", "/lib64"]) {
    try {
      if (lstatSync(top).isSymbolicLink()) entries.set(top, { kind: "symlink", target: readlinkSync(top) });
    } catch {
      // not on this host
    }
  }
  if (!programs.sh) {
    throw new SandboxError(`This host has no sh in ${searchDirs.join(", ")}: a sandbox image needs a POSIX shell`, { code: "sandbox_image_build_failed" });
  }

  // Python: its standard library and extension modules, and pip when this python has it.
  let pythonVersion: string | null = null;
  if (programs.python3) {
    const probe = spawnSync(
      programs.python3,
      ["-I", "-c", "import json,sys,sysconfig\ntry:\n import pip; p=pip.__path__[0]\nexcept Exception: p=None\nprint(json.dumps([sysconfig.get_paths()['stdlib'], sysconfig.get_paths()['platstdlib'], '%d.%d.%d' % sys.version_info[:3], p]))"],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (probe.status === 0) {
      const [stdlib, platstdlib, version, pip] = JSON.parse(probe.stdout.trim()) as [string, string, string, string | null];
      pythonVersion = version;
      for (const dir of new Set([stdlib, platstdlib])) addHostPath(dir, PYTHON_STDLIB_SKIP);
      if (pip) addHostPath(pip);
    } else {
      missingPrograms.push("python3 (standard library not found)");
    }
  }

  // Libraries: of every program and of every shared object copied (Python's lib-dynload), closed by ldd.
  for (const [p, e] of entries) if (e.kind === "file" && (/\.so(\.|$)/.test(p) || elfs.has(p))) elfs.add(p);
  const libs = sharedLibraries(elfs);
  for (const lib of libs.libraries) addHostPath(lib);
  // libgcc_s is loaded with dlopen (thread cancellation in glibc), so ldd never lists it.
  const libc = libs.libraries.find((l) => /\/libc\.so\.6$/.test(l));
  if (libc) addHostPath(path.join(path.dirname(libc), "libgcc_s.so.1"));

  // The skeleton: mount points, a sticky /tmp, and the accounts.
  for (const d of ["/etc", "/dev", "/proc", "/sys", "/home", "/mnt", "/mnt/user-data", "/mnt/user-data/workspace", "/mnt/user-data/uploads", "/mnt/user-data/outputs", "/mnt/skills"]) ensureDir(d);
  entries.set("/tmp", { kind: "dir", mode: 0o1777 });
  entries.set("/root", { kind: "dir", mode: 0o700 });
  entries.set(`/home/${user.name}`, { kind: "dir", mode: 0o755 });
  entries.set("/etc/passwd", {
    kind: "text",
    mode: 0o644,
    content: `root:x:0:0:root:/root:/bin/sh\n${user.name}:x:${user.uid}:${user.gid}:${user.name}:/home/${user.name}:/bin/${programs.bash ? "bash" : "sh"}\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n`,
  });
  entries.set("/etc/group", { kind: "text", mode: 0o644, content: `root:x:0:\n${user.name}:x:${user.gid}:\nnogroup:x:65534:\n` });
  entries.set("/etc/nsswitch.conf", { kind: "text", mode: 0o644, content: "passwd: files\ngroup: files\nhosts: files dns\n" });

  const hash = createHash("sha256").update(`layout ${LAYOUT_VERSION}\n`);
  for (const p of [...entries.keys()].sort()) {
    const e = entries.get(p)!;
    if (e.kind === "file") hash.update(`f ${p} ${e.mode} ${e.size} ${e.mtimeMs}\n`);
    else if (e.kind === "dir") hash.update(`d ${p} ${e.mode}\n`);
    else if (e.kind === "symlink") hash.update(`l ${p} ${e.target}\n`);
    else hash.update(`t ${p} ${e.mode} ${e.content.length}\n${e.content}`);
  }
  return { entries, programs, missingPrograms, missingLibraries: libs.notFound, pythonVersion, bytes, contentKey: hash.digest("hex") };
}

/**
 * Write `plan` under `root` (an empty directory): parents first, then files, links and text.
 * Directory modes are applied last so a read-only one does not stop what goes inside it.
 */
export function writeRootfs(plan: RootfsPlan, root: string): void {
  const at = (p: string) => path.join(root, p);
  // the image's "/" (a fresh temp dir is 0700, which would shut every non-root uid out)
  chmodSync(root, 0o755);
  const sorted = [...plan.entries.keys()].sort();
  for (const p of sorted) {
    const e = plan.entries.get(p)!;
    if (e.kind === "dir") mkdirSync(at(p), { recursive: true });
  }
  for (const p of sorted) {
    const e = plan.entries.get(p)!;
    if (e.kind === "dir") continue;
    mkdirSync(path.dirname(at(p)), { recursive: true });
    if (e.kind === "file") {
      copyFileSync(e.source, at(p));
      chmodSync(at(p), e.mode);
    } else if (e.kind === "symlink") {
      symlinkSync(e.target, at(p));
    } else {
      writeFileSync(at(p), e.content);
      chmodSync(at(p), e.mode);
    }
  }
  for (const p of sorted.reverse()) {
    const e = plan.entries.get(p)!;
    if (e.kind === "dir") chmodSync(at(p), e.mode);
  }
}
