import { createHash, randomBytes } from "node:crypto";
import { lstatSync, readdirSync } from "node:fs";
import { chmod, copyFile, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { KeyedMutex } from "./keyed-mutex";
import type { Skill } from "./types";

const MANIFEST = ".projection-manifest.json";
const mutex = new KeyedMutex();

/** Host directory of a user's enabled-only skills view (mounted read-only at the container path). */
export function skillsViewDir(dataDir: string, userId: string): string {
  return path.join(dataDir, "users", userId, "skills_view");
}

// Synchronous on purpose: this runs on every view re-check (every few seconds while runs start), and one
// lstat of a cached inode costs far less than the promise and thread-pool round trip of an async one.
function digestTree(hash: ReturnType<typeof createHash>, dir: string, label: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const p = path.join(dir, name);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    hash.update(`${label}/${name}:${st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "f"}:${st.size}:${st.mtimeMs}:${st.mode}\0`);
    if (st.isDirectory()) digestTree(hash, p, `${label}/${name}`);
  }
}

/**
 * Copy a package, files read-only. Symlinks are not followed or copied: a
 * link inside a skill could otherwise expose host files through the view.
 */
async function copyPackage(src: string, dst: string): Promise<void> {
  await mkdir(dst, { recursive: true, mode: 0o755 });
  for (const e of await readdir(src, { withFileTypes: true })) {
    const from = path.join(src, e.name);
    const to = path.join(dst, e.name);
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) await copyPackage(from, to);
    else if (e.isFile()) {
      await copyFile(from, to);
      const mode = (await lstat(from)).mode & 0o111 ? 0o555 : 0o444;
      await chmod(to, mode);
    }
  }
}

/**
 * Materialise the enabled skills of one user as plain copies under
 * `{dataDir}/users/{uid}/skills_view/{category}/{relative}`. The sandbox sees
 * only this view, so a disabled skill is simply absent and nothing written
 * through the view can reach the canonical packages. The view is rebuilt in
 * a temp directory and swapped in, and only when a signature over the
 * enabled set and the packages' file metadata changed.
 * @returns the view directory
 */
export async function ensureSkillsView(dataDir: string, userId: string, enabled: readonly Skill[]): Promise<string> {
  const view = skillsViewDir(dataDir, userId);
  return mutex.run(view, async () => {
    const hash = createHash("sha256");
    const sorted = [...enabled].sort((a, b) => `${a.category}/${a.relativePath}`.localeCompare(`${b.category}/${b.relativePath}`));
    for (const s of sorted) {
      hash.update(`skill:${s.category}/${s.relativePath}\0`);
      digestTree(hash, s.skillDir, `${s.category}/${s.relativePath}`);
    }
    const signature = hash.digest("hex");
    const manifest = await readFile(path.join(view, MANIFEST), "utf8").catch(() => "");
    if (manifest && (JSON.parse(manifest) as { signature?: string }).signature === signature) return view;

    const parent = path.dirname(view);
    await mkdir(parent, { recursive: true });
    const tmp = path.join(parent, `.skills_view.${randomBytes(4).toString("hex")}.tmp`);
    try {
      for (const category of ["public", "custom", "legacy"]) await mkdir(path.join(tmp, category), { recursive: true, mode: 0o755 });
      for (const s of sorted) {
        const rel = s.relativePath === "." ? "" : s.relativePath;
        await copyPackage(s.skillDir, path.join(tmp, s.category, rel));
      }
      await writeFile(path.join(tmp, MANIFEST), JSON.stringify({ version: 1, signature }));
      const trash = `${tmp}.old`;
      const hadView = await lstat(view).then(() => true, () => false);
      if (hadView) await rename(view, trash);
      await rename(tmp, view);
      if (hadView) await rm(trash, { recursive: true, force: true });
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    return view;
  });
}
