import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * A tiny sandbox image assembled from this host's own binaries and their
 * shared libraries (no registry is reachable on test machines), imported with
 * `docker import`. Tagged by a hash of its content so test files reuse it.
 */

/** Host binaries the test image carries (first existing path of each). */
const BINARIES = [
  "dash", "bash", "ls", "cat", "echo", "head", "tail", "dd", "mkdir", "rm", "cp", "mv", "ln", "chmod", "id",
  "sleep", "timeout", "env", "stat", "touch", "wc", "seq", "yes", "true", "false", "readlink", "sort", "printf",
  "grep", "sed", "pwd", "uname", "df", "kill", "ps", "whoami", "nproc", "find",
];

function findOnHost(name: string): string | undefined {
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    const p = path.join(dir, name);
    if (existsSync(p)) return realpathSync(p);
  }
  return undefined;
}

function libraryClosure(binaries: string[]): string[] {
  const libs = new Set<string>();
  for (const bin of binaries) {
    const res = spawnSync("ldd", [bin], { encoding: "utf8" });
    if (res.status !== 0) continue;
    for (const line of res.stdout.split("\n")) {
      const m = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
      if (m) libs.add(m[1]);
    }
  }
  return [...libs];
}

/** Whether the Docker daemon answers (`docker info`). */
export function dockerReachable(): boolean {
  const res = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 15_000 });
  return res.status === 0 && res.stdout.trim() !== "";
}

/**
 * Whether Docker-backed tests run: false (with a printed notice) when the daemon is unreachable, except
 * under DEERFLOW_REQUIRE_DOCKER=1 where an unreachable daemon fails the suite instead of skipping it.
 */
export function dockerTestsEnabled(): boolean {
  if (dockerReachable()) return true;
  if (process.env.DEERFLOW_REQUIRE_DOCKER === "1") throw new Error("DEERFLOW_REQUIRE_DOCKER=1 but the Docker daemon is not reachable (docker info failed)");
  console.warn("[docker sandbox tests] SKIPPING: the Docker daemon is not reachable (docker info failed)");
  return false;
}

/** Build (once per content) and return the reference of the test image, e.g. `deerflow-test-sandbox:3fa2…`. */
export function ensureTestImage(): string {
  const bins = new Map<string, string>();
  for (const name of BINARIES) {
    const p = findOnHost(name);
    if (p) bins.set(name, p);
  }
  if (!bins.has("dash")) throw new Error("the test image needs /bin/dash on the host");
  const files = [...new Set([...bins.values(), ...libraryClosure([...bins.values()])])].sort();
  const hash = createHash("sha256");
  hash.update("layout-2\n");
  for (const [name, p] of [...bins.entries()].sort()) hash.update(`${name}=${p}\n`);
  for (const f of files) hash.update(f).update(readFileSync(f));
  const ref = `deerflow-test-sandbox:${hash.digest("hex").slice(0, 16)}`;
  const present = spawnSync("docker", ["image", "inspect", ref], { stdio: "ignore" });
  if (present.status === 0) return ref;

  const root = mkdtempSync(path.join(os.tmpdir(), "dfimg-"));
  try {
    for (const d of ["usr/bin", "usr/lib", "etc", "tmp", "proc", "dev", "sys", "mnt", "root"]) mkdirSync(path.join(root, d), { recursive: true });
    chmodSync(path.join(root, "tmp"), 0o1777);
    symlinkSync("usr/bin", path.join(root, "bin"));
    symlinkSync("usr/bin", path.join(root, "sbin"));
    for (const f of files) {
      if (bins.has(path.basename(f)) && [...bins.values()].includes(f)) continue;
      const dest = path.join(root, f.startsWith("/usr/") ? f : `/usr${f}`);
      mkdirSync(path.dirname(dest), { recursive: true });
      copyFileSync(f, dest);
    }
    // /lib, /lib64 as in merged-/usr layouts; the loader path named in every ELF must resolve.
    symlinkSync("usr/lib", path.join(root, "lib"));
    if (files.some((f) => f.startsWith("/lib64/") || f.startsWith("/usr/lib64/"))) symlinkSync("usr/lib64", path.join(root, "lib64"));
    for (const [name, p] of bins) copyFileSync(p, path.join(root, "usr/bin", name));
    symlinkSync("dash", path.join(root, "usr/bin/sh"));
    writeFileSync(path.join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n");
    writeFileSync(path.join(root, "etc/group"), "root:x:0:\nnogroup:x:65534:\n");
    execFileSync("/bin/sh", ["-c", `tar -C "$1" -c . | docker import - "$2" >/dev/null`, "import", root, ref], { stdio: ["ignore", "ignore", "inherit"], timeout: 120_000 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return ref;
}

/** Remove every container carrying `label=value` (afterAll cleanup; tests never leave containers behind). */
export function removeLabelled(label: string, value: string): void {
  const ids = execFileSync("docker", ["ps", "-aq", "--filter", `label=${label}=${value}`], { encoding: "utf8" }).split("\n").filter(Boolean);
  if (ids.length) spawnSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
}

/** Ids of containers carrying `label=value`. */
export function listLabelled(label: string, value: string): string[] {
  return execFileSync("docker", ["ps", "-aq", "--filter", `label=${label}=${value}`], { encoding: "utf8" }).split("\n").filter(Boolean);
}
