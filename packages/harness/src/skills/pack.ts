import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";

/** Every member gets the same time (the zip format's earliest year), so packing a folder twice gives the same bytes. */
const ARCHIVE_MTIME = new Date(1980, 0, 2);

/** One regular file of a skill folder, as it goes into the archive. */
interface PackedFile {
  name: string;
  bytes: Buffer;
  mode: number;
}

async function collectFiles(dir: string): Promise<PackedFile[]> {
  const files: PackedFile[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const entries = (await readdir(abs, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(childAbs, childRel);
      else if (e.isFile()) files.push({ name: childRel, bytes: await readFile(childAbs), mode: ((await stat(childAbs)).mode & 0o777) | 0o100000 });
    }
  };
  await walk(dir, "");
  return files;
}

/**
 * Pack a skill folder into `.skill` (zip) bytes: regular files only, with
 * their unix modes; symlinks are not followed. Installing a folder goes
 * through this so it meets exactly the archive checks.
 */
export async function packSkillFolder(dir: string): Promise<Uint8Array> {
  const files = await collectFiles(dir);
  // yazl is imported by the first pack (`deerflow skills pack`, skill export), not when the skills module loads;
  // it is the writing half of yauzl, which reads archives on install.
  const { ZipFile } = await import("yazl");
  const zip = new ZipFile();
  for (const f of files) zip.addBuffer(f.bytes, f.name, { mode: f.mode, mtime: ARCHIVE_MTIME });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    zip.outputStream.on("data", (c: Buffer) => chunks.push(c));
    zip.outputStream.on("error", reject);
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
  zip.end();
  return new Uint8Array(await done);
}
