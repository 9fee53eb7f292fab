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
  const key = `${options.bwrapPath ?? ""}:${options.runAs?.uid ?? "self"}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const bwrapPath = options.bwrapPath ?? findBinary("bwrap");
  const prlimitPath = findBinary("prlimit");
  const setprivPath = findBinary("setpriv");
  let result: BwrapProbe;
  if (!bwrapPath) {
    result = { ok: false, reason: "bwrap is not installed (apt-get install bubblewrap)" };
  } else if (options.runAs && !setprivPath) {
    result = { ok: false, bwrapPath, reason: "setpriv is required to drop root privileges but was not found" };
  } else {
    const argv = buildBwrapCommand({
      bwrapPath,
      setprivPath,
      runAs: options.runAs,
      binds: [],
      network: false,
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/",
      command: "true",
    });
    const r = spawnSync(argv[0], argv.slice(1), { cwd: "/", timeout: 10_000, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    result =
      r.status === 0
        ? { ok: true, bwrapPath, prlimitPath, setprivPath }
        : { ok: false, bwrapPath, reason: `bwrap probe failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.error?.message || "").trim()}` };
  }
  cache.set(key, result);
  return result;
}
