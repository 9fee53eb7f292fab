import { spawnSync } from "node:child_process";
import { buildBwrapCommand } from "./argv";
import { findBinary } from "./find-binary";

/** Outcome of {@link probeBwrap}. */
export interface BwrapProbe {
  ok: boolean;
  bwrapPath?: string;
  prlimitPath?: string;
  setprivPath?: string;
  /** Why bwrap is not usable (when `ok` is false). */
  reason?: string;
}

const cache = new Map<string, BwrapProbe>();

/**
 * Check that bubblewrap is installed AND can start the exact sandbox profile
 * on this machine (user namespaces may be disabled, AppArmor may block them).
 * Results are cached per `runAs` uid.
 */
export function probeBwrap(options: { runAs?: { uid: number; gid: number }; bwrapPath?: string } = {}): BwrapProbe {
  const key = probeKey(options);
  const hit = cache.get(key);
  if (hit) return hit;
  const tools = findBwrapTools(options);
  let result: BwrapProbe = tools;
  if (tools.ok && tools.bwrapPath) {
    const argv = buildBwrapCommand({
      bwrapPath: tools.bwrapPath,
      setprivPath: tools.setprivPath,
      runAs: options.runAs,
      binds: [],
      network: false,
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/",
      command: "true",
    });
    const r = spawnSync(argv[0], argv.slice(1), { cwd: "/", timeout: 10_000, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    result = r.status === 0 ? tools : { ok: false, bwrapPath: tools.bwrapPath, reason: `bwrap probe failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.error?.message || "").trim()}` };
  }
  cache.set(key, result);
  return result;
}

function probeKey(options: { runAs?: { uid: number }; bwrapPath?: string }): string {
  return `${options.bwrapPath ?? ""}:${options.runAs?.uid ?? "self"}`;
}

/**
 * The binaries the sandbox needs, found on PATH without starting anything:
 * `ok: false` with the reason when one is missing, else `ok: true` meaning only
 * "installed" (whether bwrap can start is what {@link probeBwrap} checks).
 */
export function findBwrapTools(options: { runAs?: { uid: number; gid: number }; bwrapPath?: string } = {}): BwrapProbe {
  const bwrapPath = options.bwrapPath ?? findBinary("bwrap");
  if (!bwrapPath) return { ok: false, reason: "bwrap is not installed (apt-get install bubblewrap)" };
  const prlimitPath = findBinary("prlimit");
  const setprivPath = findBinary("setpriv");
  if (options.runAs && !setprivPath) return { ok: false, bwrapPath, reason: "setpriv is required to drop root privileges but was not found" };
  return { ok: true, bwrapPath, prlimitPath, setprivPath };
}

/**
 * Record that bwrap started: a sandbox with binds ran (the data-dir probe), which proves the
 * bind-less profile works too, so the basic probe need not start one of its own.
 */
export function rememberBwrapWorks(options: { runAs?: { uid: number }; bwrapPath?: string }, tools: BwrapProbe): void {
  if (tools.ok) cache.set(probeKey(options), tools);
}
