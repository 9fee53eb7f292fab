import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The base image the deploy tests build deploy/Dockerfile from. No image registry is reachable on
 * test machines, so `node:20-bookworm-slim` cannot be pulled; instead this assembles a root filesystem
 * from the host's own node binary, a POSIX shell (the Dockerfile's RUN lines) and the few
 * tools those lines call, with their shared libraries, and `docker import`s it. Tagged by a hash of
 * its content, so it is built once per host node version and reused by every later run.
 */

/** Repository prefix of the base image; the tag is the content hash. */
export const BASE_REPOSITORY = "deerflow-test-node-base";

/** Host tools the Dockerfile's RUN lines use (dash becomes /bin/sh). */
const TOOLS = ["dash", "mkdir", "chown", "chmod", "rm", "ls", "cat", "id", "env"];

function onHost(name: string): string | undefined {
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]) {
    const p = path.join(dir, name);
    if (existsSync(p)) return realpathSync(p);
  }
  return undefined;
}

function sharedLibraries(binaries: string[]): string[] {
  const libs = new Set<string>();
  for (const bin of binaries) {
    const res = spawnSync("ldd", [bin], { encoding: "utf8" });
    if (res.status !== 0) continue;
    for (const line of res.stdout.split("\n")) {
      const m = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
      if (m) libs.add(m[1]);
    }
  }
  return [...libs].sort();
}

/** Where the image keeps a host path: everything under /usr (merged-/usr layout, /lib → usr/lib). */
function inImage(root: string, hostPath: string): string {
  return path.join(root, hostPath.startsWith("/usr/") ? hostPath : `/usr${hostPath}`);
}

/** Build the base image when its content tag is missing; return its reference. */
export function ensureNodeBaseImage(): string {
  const node = realpathSync(process.execPath);
  const tools = new Map<string, string>();
  for (const t of TOOLS) {
    const p = onHost(t);
    if (!p) throw new Error(`the deploy test base image needs '${t}' on this machine (looked in /usr/bin, /bin, /usr/sbin, /sbin)`);
    tools.set(t, p);
  }
  const libs = sharedLibraries([node, ...tools.values()]);
  const hash = createHash("sha256");
  hash.update("deploy-base-2\n");
  for (const f of [node, ...tools.values(), ...libs]) hash.update(f).update(readFileSync(f));
  const ref = `${BASE_REPOSITORY}:${hash.digest("hex").slice(0, 16)}`;
  if (spawnSync("docker", ["image", "inspect", ref], { stdio: "ignore" }).status === 0) return ref;

  const root = mkdtempSync(path.join(os.tmpdir(), "dfbase-"));
  try {
    for (const d of ["usr/bin", "usr/lib", "usr/sbin", "etc", "tmp", "proc", "dev", "sys", "root", "home"]) mkdirSync(path.join(root, d), { recursive: true });
    chmodSync(path.join(root, "tmp"), 0o1777);
    for (const l of ["bin", "lib"]) symlinkSync(`usr/${l}`, path.join(root, l));
    symlinkSync("usr/sbin", path.join(root, "sbin"));
    for (const lib of libs) {
      const dest = inImage(root, lib);
      mkdirSync(path.dirname(dest), { recursive: true });
      copyFileSync(lib, dest);
    }
    // the loader path written into every ELF (/lib64/ld-linux-x86-64.so.2 on x86-64) must resolve
    if (libs.some((f) => f.startsWith("/lib64/") || f.startsWith("/usr/lib64/"))) symlinkSync("usr/lib64", path.join(root, "lib64"));
    copyFileSync(node, path.join(root, "usr/bin/node"));
    chmodSync(path.join(root, "usr/bin/node"), 0o755);
    for (const [name, p] of tools) copyFileSync(p, path.join(root, "usr/bin", name));
    symlinkSync("dash", path.join(root, "usr/bin/sh"));
    // as in Debian-based node images: root, nobody, and the `node` user (uid 1000) for non-root stages
    writeFileSync(path.join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    writeFileSync(path.join(root, "etc/group"), "root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n");
    mkdirSync(path.join(root, "home/node"));
    execFileSync("/bin/sh", ["-c", `tar -C "$1" --numeric-owner -c . | docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - "$2" >/dev/null`, "import", root, ref], {
      stdio: ["ignore", "ignore", "inherit"],
      timeout: 180_000,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return ref;
}

/**
 * Whether the Docker-backed deploy tests run: false (with a printed notice) when the daemon is
 * unreachable, except under DEERFLOW_REQUIRE_DOCKER=1 (CI), where that fails the suite instead.
 */
export function dockerTestsEnabled(): boolean {
  const res = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 15_000 });
  if (res.status === 0 && res.stdout.trim() !== "") return true;
  if (process.env.DEERFLOW_REQUIRE_DOCKER === "1") throw new Error("DEERFLOW_REQUIRE_DOCKER=1 but the Docker daemon is not reachable (docker info failed)");
  console.warn("[deploy image tests] SKIPPING: the Docker daemon is not reachable (docker info failed)");
  return false;
}
