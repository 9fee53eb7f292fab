import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SandboxError } from "../../errors";
import { findBinary } from "../bwrap/find-binary";
import { connectDocker } from "../docker/engine";
import { DEFAULT_SANDBOX_IMAGE, IMAGE_BUILD_LABEL, IMAGE_CONTENT_LABEL, importRootfs } from "./build";
import type { BuildImageOptions, BuiltImage } from "./build";

/**
 * A Debian image without any registry: `debootstrap` installs a minimal Debian from the apt mirror
 * this host uses, with the same packages as docker/sandbox/Dockerfile, and the result is imported.
 * Slower than `--from-host` (it downloads and unpacks a distribution) but gives a real Debian whose
 * apt and pip work inside, independent of what the host has installed.
 */

/** What the debootstrapped image installs (the Dockerfile's list). */
export const DEBOOTSTRAP_PACKAGES: readonly string[] = [
  "bash", "ca-certificates", "coreutils", "curl", "diffutils", "file", "findutils", "gawk", "git", "grep", "gzip", "jq",
  "less", "make", "patch", "procps", "python3", "python3-pip", "python3-venv", "sed", "tar", "unzip", "wget",
  "xz-utils", "bzip2", "zip",
];

/**
 * The main archive's mirror and suite in apt source files (one-line `deb URL SUITE …` or deb822
 * `URIs:` / `Suites:` stanzas); security archives are skipped, they hold no base system.
 */
export function parseAptSources(texts: readonly string[]): { mirror?: string; suite?: string } {
  let mirror: string | undefined;
  let suite: string | undefined;
  for (const text of texts) {
    for (const m of text.matchAll(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/gm)) {
      if (/security/.test(m[1]) || mirror) continue;
      mirror = m[1];
      suite = m[2];
    }
    for (const block of text.split(/\n\s*\n/)) {
      const types = /^Types:(.*)$/im.exec(block)?.[1].trim().split(/\s+/);
      if (types && !types.includes("deb")) continue;
      const uris = /^URIs:\s*(\S+)/im.exec(block)?.[1];
      const suites = /^Suites:\s*(\S+)/im.exec(block)?.[1];
      if (uris && suites && !/security/.test(uris) && !mirror) {
        mirror = uris;
        suite = suites;
      }
    }
  }
  return { mirror, suite };
}

/** The Debian mirror and suite apt uses on this host, with Debian's defaults. */
export function hostAptSource(): { mirror: string; suite: string } {
  const texts: string[] = [];
  const files = ["/etc/apt/sources.list"];
  try {
    for (const f of readdirSync("/etc/apt/sources.list.d").sort()) files.push(path.join("/etc/apt/sources.list.d", f));
  } catch {
    // no sources.list.d
  }
  for (const file of files) {
    try {
      texts.push(readFileSync(file, "utf8"));
    } catch {
      // unreadable: skipped
    }
  }
  let { mirror, suite } = parseAptSources(texts);
  if (!suite) {
    try {
      suite = /^VERSION_CODENAME=(\S+)/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1];
    } catch {
      // not a Debian-like host
    }
  }
  return { mirror: mirror ?? "http://deb.debian.org/debian", suite: suite ?? "bookworm" };
}

/** Mount points at or under `dir` (from /proc/self/mounts, octal escapes decoded), deepest first. */
function mountsUnder(dir: string): string[] {
  let text = "";
  try {
    text = readFileSync("/proc/self/mounts", "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .map((l) => l.split(" ")[1]?.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

/**
 * Remove the work directory, but never through a mount: debootstrap mounts /proc and /sys (and on
 * some hosts binds /dev) inside the new root, and a failed run can leave them mounted; deleting
 * through them would delete the host's files. What cannot be unmounted is left in place.
 */
function removeWork(work: string, log: (line: string) => void): void {
  for (const m of mountsUnder(work)) spawnSync("umount", ["-l", m], { stdio: "ignore", timeout: 30_000 });
  const left = mountsUnder(work);
  if (left.length) {
    log(`left ${work} in place: still mounted there: ${left.join(", ")}`);
    return;
  }
  rmSync(work, { recursive: true, force: true });
}

/** Options of {@link buildImageFromDebootstrap}. */
export interface DebootstrapOptions extends BuildImageOptions {
  /** Debian suite (default: the host's, else bookworm). */
  suite?: string;
  /** Mirror URL (default: the one apt uses here). */
  mirror?: string;
  packages?: readonly string[];
  /** Rebuild even when the tag holds an image of the same suite, mirror and packages. */
  force?: boolean;
  tmpDir?: string;
}

function run(cmd: string, args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const tail: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        // debootstrap prints one "I: Retrieving/Validating/Unpacking …" line per package; the stages are enough
        if (/^I: (Retrieving Release|Resolving|Found|Checking|Extracting|Installing|Configuring|Base system)/.test(line) && !/^I: (Retrieving|Validating|Extracting|Configuring) \S+$/.test(line)) log(line);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", (err) => reject(new SandboxError(`Cannot run ${cmd}: ${err.message}`, { code: "sandbox_image_build_failed", cause: err })));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new SandboxError(`${path.basename(cmd)} failed (exit ${code}):\n${tail.join("\n")}`, { code: "sandbox_image_build_failed" }))));
  });
}

/**
 * Build the default image's Debian with `debootstrap --variant=minbase` from the host's apt mirror
 * (no image registry), add the `sandbox` account (uid 1000) and the mount points, drop apt's
 * caches, and import it. Reused when the tag already holds one of the same suite, mirror and
 * packages unless `force`.
 * @throws SandboxError `sandbox_image_build_failed` (not root, no debootstrap, the mirror unreachable);
 *   DockerError when the daemon cannot be used.
 */
export async function buildImageFromDebootstrap(options: DebootstrapOptions = {}): Promise<BuiltImage> {
  const ref = options.tag ?? DEFAULT_SANDBOX_IMAGE;
  const log = options.log ?? (() => undefined);
  if (process.getuid?.() !== 0) {
    throw new SandboxError("debootstrap needs root (it chroots and sets file owners): run this as root, or use --from-host", { code: "sandbox_image_build_failed" });
  }
  const debootstrap = findBinary("debootstrap");
  if (!debootstrap) throw new SandboxError("debootstrap is not installed: apt-get install debootstrap (or use --from-host)", { code: "sandbox_image_build_failed" });
  const engine = options.engine ?? connectDocker();
  await engine.ping();
  const source = hostAptSource();
  const suite = options.suite ?? source.suite;
  const mirror = options.mirror ?? source.mirror;
  const packages = [...(options.packages ?? DEBOOTSTRAP_PACKAGES)].sort();
  const contentKey = createHash("sha256").update(`debootstrap 1\n${suite}\n${mirror}\n${packages.join(",")}\n`).digest("hex");
  const existing = await engine.inspectImage(ref);
  if (!options.force && existing?.Config?.Labels?.[IMAGE_CONTENT_LABEL] === contentKey) {
    log(`${ref} is up to date (debootstrap of ${suite}, content ${contentKey.slice(0, 12)})`);
    return { ref, id: existing.Id, method: "debootstrap", reused: true, sizeBytes: existing.Size };
  }
  const work = mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), "deerflow-debootstrap-"));
  const root = path.join(work, "root");
  try {
    log(`debootstrap ${suite} from ${mirror} with ${packages.length} packages (downloads a few hundred MB; minutes)`);
    await run(debootstrap, ["--variant=minbase", `--include=${packages.join(",")}`, suite, root, mirror], log);
    const mounted = mountsUnder(root);
    if (mounted.length) throw new SandboxError(`debootstrap left file systems mounted in the new root (${mounted.join(", ")}); not importing it`, { code: "sandbox_image_build_failed" });
    const account = spawnSync("chroot", [root, "/bin/sh", "-c", "groupadd --gid 1000 sandbox && useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash sandbox && apt-get clean"], { encoding: "utf8", timeout: 120_000 });
    if (account.status !== 0) throw new SandboxError(`Adding the sandbox account in the new root failed: ${(account.stderr || account.error?.message || "").trim()}`, { code: "sandbox_image_build_failed" });
    for (const d of ["mnt/user-data/workspace", "mnt/user-data/uploads", "mnt/user-data/outputs", "mnt/skills"]) mkdirSync(path.join(root, d), { recursive: true });
    // apt's downloaded lists are stale the day after and half the size of the system
    const lists = path.join(root, "var/lib/apt/lists");
    if (existsSync(lists)) for (const f of readdirSync(lists)) if (f !== "partial" && f !== "lock") rmSync(path.join(lists, f), { recursive: true, force: true });
    log(`importing as ${ref}`);
    const id = await importRootfs(engine, root, ref, { [IMAGE_CONTENT_LABEL]: contentKey, [IMAGE_BUILD_LABEL]: "debootstrap" });
    const info = await engine.requireImage(ref);
    return { ref, id: id ?? info.Id, method: "debootstrap", reused: false, sizeBytes: info.Size };
  } finally {
    removeWork(work, log);
  }
}
