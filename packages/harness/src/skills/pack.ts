import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Zippable } from "fflate";

/**
 * Pack a skill folder into `.skill` (zip) bytes: regular files only, with
 * their unix modes; symlinks are not followed. Installing a folder goes
 * through this so it meets exactly the archive checks.
 */
export async function packSkillFolder(dir: string): Promise<Uint8Array> {
  const files: Zippable = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(childAbs, childRel);
      else if (e.isFile()) {
        const mode = ((await stat(childAbs)).mode & 0o777) | 0o100000;
        files[childRel] = [new Uint8Array(await readFile(childAbs)), { os: 3, attrs: mode << 16 }];
      }
    }
  };
  await walk(dir, "");
  // fflate is imported by the first pack (`deerflow skills pack`, skill export), not when the skills module loads
  const { zipSync } = await import("fflate");
  return zipSync(files);
}
