import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform } from "node:stream";
import type { Entry, ZipFile } from "yauzl";
import { SkillAlreadyExistsError, SkillInstallError } from "./errors";
import { splitSkillMarkdown, validateSkillFrontmatter } from "./frontmatter";
import { readFile } from "node:fs/promises";
import { formatFindings, scanSkillDir } from "./static-scan";
import type { StaticFinding } from "./static-scan";
import type { SkillContentReview } from "./content-review";
import { SKILL_MD_FILE } from "./types";

/** Limits of one archive. */
export interface InstallLimits {
  /** Max members (default 4096). */
  maxEntries: number;
  /** Max total uncompressed bytes actually written (default 512 MiB). */
  maxTotalBytes: number;
  /** Max uncompressed/compressed ratio of a member larger than 1 MiB (default 200). */
  maxRatio: number;
}

/** DeerFlow's limits. */
export const DEFAULT_INSTALL_LIMITS: InstallLimits = { maxEntries: 4096, maxTotalBytes: 512 * 1024 * 1024, maxRatio: 200 };

const EXECUTABLE_MAGICS = [
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0x4d, 0x5a], // PE / DOS
  [0xfe, 0xed, 0xfa, 0xce],
  [0xfe, 0xed, 0xfa, 0xcf],
  [0xce, 0xfa, 0xed, 0xfe],
  [0xcf, 0xfa, 0xed, 0xfe],
  [0xca, 0xfe, 0xba, 0xbe],
  [0xbe, 0xba, 0xfe, 0xca],
  [0xca, 0xfe, 0xba, 0xbf],
  [0xbf, 0xba, 0xfe, 0xca],
];

/** True when the bytes start like an ELF, PE or Mach-O executable. */
export function isExecutableBinary(prefix: Uint8Array): boolean {
  return EXECUTABLE_MAGICS.some((magic) => magic.length <= prefix.length && magic.every((b, i) => prefix[i] === b));
}

/** Why a member name is unsafe (absolute, drive letter, `..`, colon), or undefined. */
export function unsafeMemberReason(name: string): string | undefined {
  const n = name.replace(/\\/g, "/");
  if (n.startsWith("/") || /^[A-Za-z]:/.test(n)) return "absolute path";
  if (n.split("/").includes("..")) return "parent-directory traversal";
  // A colon has no use in a relative member name and addresses an alternate
  // data stream on NTFS, which would hide content from directory scans.
  if (n.includes(":")) return "colon in path";
  if (n.includes("\0")) return "NUL in path";
  return undefined;
}

function decodeName(raw: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    return raw.toString("latin1");
  }
}

async function openZip(file: string): Promise<ZipFile> {
  // yauzl is imported by the first archive install, not when the skills module loads
  const { default: yauzl } = await import("yauzl");
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: true }, (err, zip) => {
      if (err || !zip) reject(new SkillInstallError(`Not a valid skill archive (.skill zip): ${err?.message ?? "unreadable"}`, { cause: err }));
      else resolve(zip);
    });
  });
}

function openEntry(zip: ZipFile, entry: Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, s) => (err || !s ? reject(err ?? new Error("unreadable entry")) : resolve(s))));
}

/**
 * Extract an archive into `dest` with per-entry streaming checks: unsafe
 * names refused, symlink members skipped, at most `maxEntries` members, the
 * bytes actually inflated counted against `maxTotalBytes` (a lying header
 * cannot get past it), a high compression ratio refused as a zip bomb, and
 * ELF/PE/Mach-O binaries refused by their first bytes.
 * @throws SkillInstallError on the first violation (nothing is cleaned here; the caller owns `dest`).
 */
export async function extractSkillArchive(archive: string, dest: string, limits: InstallLimits = DEFAULT_INSTALL_LIMITS): Promise<{ skipped: string[] }> {
  const zip = await openZip(archive);
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new SkillInstallError(`Skill archive contains too many entries (${zip.entryCount} > ${limits.maxEntries}).`);
  }
  const skipped: string[] = [];
  let total = 0;
  const root = path.resolve(dest);
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      zip.close();
      reject(err instanceof SkillInstallError ? err : new SkillInstallError(`Could not extract skill archive: ${(err as Error).message}`, { cause: err }));
    };
    zip.on("error", fail);
    zip.on("end", () => {
      if (!failed) resolve();
    });
    zip.on("entry", (entry: Entry) => {
      void (async () => {
        const name = decodeName(entry.fileName as unknown as Buffer).replace(/\\/g, "/");
        const reason = unsafeMemberReason(name);
        if (reason) throw new SkillInstallError(`Archive contains unsafe member path (${reason}): '${name}'`);
        const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
        if (mode === 0o120000) {
          skipped.push(name);
          return;
        }
        const target = path.resolve(root, ...name.split("/").filter(Boolean));
        if (target !== root && !target.startsWith(`${root}${path.sep}`)) throw new SkillInstallError(`Zip entry escapes destination: '${name}'`);
        if (name.endsWith("/")) {
          await mkdir(target, { recursive: true });
          return;
        }
        if (entry.uncompressedSize > 1024 * 1024 && entry.uncompressedSize / Math.max(1, entry.compressedSize) > limits.maxRatio) {
          throw new SkillInstallError(`Skill archive is too large or appears highly compressed ('${name}').`);
        }
        if (total + entry.uncompressedSize > limits.maxTotalBytes) throw new SkillInstallError("Skill archive is too large or appears highly compressed.");
        await mkdir(path.dirname(target), { recursive: true });
        const source = await openEntry(zip, entry);
        let first = true;
        const guard = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            if (first) {
              first = false;
              if (isExecutableBinary(chunk)) return cb(new SkillInstallError(`Archive contains executable binary member: '${name}'`));
            }
            total += chunk.length;
            if (total > limits.maxTotalBytes) return cb(new SkillInstallError("Skill archive is too large or appears highly compressed."));
            cb(null, chunk);
          },
        });
        const unixMode = (entry.externalFileAttributes >>> 16) & 0o777;
        await pipeline(source, guard, createWriteStream(target, { mode: unixMode & 0o111 ? 0o755 : 0o644 }));
      })().then(() => {
        if (!failed) zip.readEntry();
      }, fail);
    });
    zip.readEntry();
  });
  return { skipped };
}

/** The skill root of an extracted archive: a single top folder is unwrapped. */
async function resolveSkillRoot(dir: string): Promise<string> {
  const items = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith(".") && e.name !== "__MACOSX");
  if (!items.length) throw new SkillInstallError("Skill archive is empty");
  const only = items[0];
  if (items.length === 1 && only?.isDirectory()) return path.join(dir, only.name);
  return dir;
}

async function findNestedSkillMd(root: string, rel = ""): Promise<string | undefined> {
  for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const childRel = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      const hit = await findNestedSkillMd(root, childRel);
      if (hit) return hit;
    } else if (e.name === SKILL_MD_FILE && rel) return childRel;
  }
  return undefined;
}

/** Options of {@link installSkillArchive}. */
export interface InstallSkillOptions {
  /** Directory holding custom skills (`…/skills/custom`); the skill lands in `<customRoot>/<name>`. */
  customRoot: string;
  /** True when a skill of that name exists anywhere the user can see (public, legacy, custom). */
  exists: (name: string) => Promise<boolean>;
  /** Run the static scan (`skill_scan.enabled`, default true). */
  scan?: boolean;
  limits?: InstallLimits;
  /** The LLM content review run after the static scan passed (`skill_evolution.moderation_model_name`); throws to refuse. */
  contentReview?: SkillContentReview;
}

/** What an install reports (DeerFlow's response shape). */
export interface InstallResult {
  success: true;
  skill_name: string;
  message: string;
  /** Non-blocking scan findings. */
  findings: StaticFinding[];
}

/**
 * Install a `.skill` archive as a custom skill: extract into a staging
 * directory next to `customRoot` (same filesystem), validate the SKILL.md
 * strictly, refuse nested SKILL.md files and duplicate names, run the
 * static scan (CRITICAL findings block), then move the package into place
 * with one rename, so a failed install leaves nothing behind.
 */
export async function installSkillArchive(archive: string, options: InstallSkillOptions): Promise<InstallResult> {
  const st = await stat(archive).catch(() => null);
  if (!st?.isFile()) throw new SkillInstallError(`Skill archive not found: ${path.basename(archive)}`, { details: { status: 404 } });
  if (!archive.endsWith(".skill") && !archive.endsWith(".zip")) throw new SkillInstallError("File must have .skill extension");
  const parent = path.dirname(options.customRoot);
  await mkdir(options.customRoot, { recursive: true });
  const staging = path.join(parent, `.install-${randomBytes(6).toString("hex")}`);
  await mkdir(staging, { recursive: true });
  try {
    await extractSkillArchive(archive, staging, options.limits ?? DEFAULT_INSTALL_LIMITS);
    const root = await resolveSkillRoot(staging);
    const mdFile = path.join(root, SKILL_MD_FILE);
    const md = await readFile(mdFile, "utf8").catch(() => null);
    if (md === null) throw new SkillInstallError("SKILL.md not found at the root of the skill archive");
    const fm = validateSkillFrontmatter(splitSkillMarkdown(md, SKILL_MD_FILE).metadata, SKILL_MD_FILE, { strict: true });
    const nested = await findNestedSkillMd(root);
    if (nested) throw new SkillInstallError(`Security scan failed for skill '${fm.name}': nested SKILL.md is not allowed at ${fm.name}/${nested}`);
    const findings = options.scan === false ? [] : await scanSkillDir(root);
    const critical = findings.filter((f) => f.severity === "CRITICAL");
    if (critical.length) {
      throw new SkillInstallError(`Static security scan blocked skill '${fm.name}': ${formatFindings(critical)}`, { details: { findings: critical, skill_name: fm.name } });
    }
    await options.contentReview?.({ skillName: fm.name, dir: root });
    if (await options.exists(fm.name)) throw new SkillAlreadyExistsError(`Skill '${fm.name}' already exists`);
    const target = path.join(options.customRoot, fm.name);
    try {
      await rename(root, target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST" || code === "ENOTEMPTY") throw new SkillAlreadyExistsError(`Skill '${fm.name}' already exists`);
      throw err;
    }
    return { success: true, skill_name: fm.name, message: `Skill '${fm.name}' installed successfully`, findings };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
