import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { buildBwrapCommand } from "./argv";
import { findBinary } from "./find-binary";
import { probeBwrap } from "./probe";
import type { BwrapProbe } from "./probe";
import { searchBlocker } from "./staging";
import type { StageTools } from "./staging";

/** Outcome of {@link probeBwrapDataDir}: the basic probe plus how binds from the data dir are made. */
export interface BwrapDataDirProbe extends BwrapProbe {
  /** The data dir that was tested. */
  baseDir: string;
  /** Set when binds must be staged (the sandbox uid cannot enter {@link blocker}). */
  stage?: StageTools;
  /** The directory above the data dir the sandbox uid cannot enter, if any. */
  blocker?: string;
}

const cache = new Map<string, BwrapDataDirProbe>();

/**
 * How bind sources under `baseDir` (and `extraHosts`, e.g. the skills dir)
 * reach bwrap: directly, or staged when the sandbox uid cannot enter a
 * directory above them. Undefined `stage` with a `blocker` means staging is
 * impossible (no unshare/mount).
 */
export function bindStrategy(baseDir: string, runAs: { uid: number; gid: number } | undefined, extraHosts: readonly string[] = []): { stage?: StageTools; blocker?: string } {
  if (!runAs) return {};
  // `users` stands for anything inside the data dir: the sandbox makes the dirs below it enterable itself.
  const blocker = [path.join(baseDir, "users"), ...extraHosts].map((h) => searchBlocker(h, runAs)).find((b) => b !== undefined);
  if (!blocker) return {};
  const unsharePath = findBinary("unshare");
  const mountPath = findBinary("mount");
  return unsharePath && mountPath ? { stage: { unsharePath, mountPath }, blocker } : { blocker };
}

/**
 * Start a real sandbox against the REAL data dir: create a scratch directory
 * under `baseDir` owned by the sandbox uid, bind it exactly as a thread's
 * workspace is bound, write and read a file inside bwrap, clean up. Catches
 * what the bind-less {@link probeBwrap} cannot: a data dir the sandbox uid
 * cannot reach. The failure reason names the blocking directory. Cached per
 * data dir and uid.
 */
export function probeBwrapDataDir(options: { baseDir: string; runAs?: { uid: number; gid: number }; bwrapPath?: string }): BwrapDataDirProbe {
  const baseDir = path.resolve(options.baseDir);
  const key = `${options.bwrapPath ?? ""}:${options.runAs?.uid ?? "self"}:${baseDir}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const basic = probeBwrap({ runAs: options.runAs, bwrapPath: options.bwrapPath });
  let result: BwrapDataDirProbe;
  if (!basic.ok || !basic.bwrapPath) {
    result = { ...basic, baseDir };
  } else {
    const { stage, blocker } = bindStrategy(baseDir, options.runAs);
    if (blocker && !stage) {
      result = {
        ...basic,
        ok: false,
        baseDir,
        blocker,
        reason: `the sandbox uid ${options.runAs?.uid} cannot enter ${blocker} (above the data dir ${baseDir}), and unshare/mount to stage the binds were not found`,
      };
    } else {
      result = { ...runScratchSandbox(basic, baseDir, stage, options.runAs), stage, blocker };
    }
  }
  if (result.ok) cache.set(key, result);
  return result;
}

function runScratchSandbox(basic: BwrapProbe, baseDir: string, stage: StageTools | undefined, runAs: { uid: number; gid: number } | undefined): BwrapDataDirProbe {
  let scratch: string | undefined;
  try {
    mkdirSync(baseDir, { recursive: true });
    scratch = mkdtempSync(path.join(baseDir, ".sandbox-probe-"));
    const workspace = path.join(scratch, "workspace");
    mkdirSync(workspace);
    if (runAs) {
      // Our own scratch dir: enterable by the sandbox uid, like the thread dirs below `users/`.
      chmodSync(scratch, 0o711);
      chownSync(workspace, runAs.uid, runAs.gid);
      chmodSync(workspace, 0o700);
    }
    const argv = buildBwrapCommand({
      bwrapPath: basic.bwrapPath as string,
      setprivPath: basic.setprivPath,
      runAs,
      stage,
      binds: [{ host: workspace, dest: "/mnt/user-data/workspace", readOnly: false }],
      network: false,
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/mnt/user-data/workspace",
      command: "echo ok > probe && cat probe",
    });
    const r = spawnSync(argv[0], argv.slice(1), { cwd: "/", timeout: 10_000, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: "/usr/bin:/bin" } });
    if (r.status === 0 && r.stdout.trim() === "ok") return { ...basic, baseDir };
    const why = (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim();
    return { ...basic, ok: false, baseDir, reason: `bwrap cannot bind a directory of the data dir ${baseDir}: ${why}` };
  } catch (err) {
    return { ...basic, ok: false, baseDir, reason: `cannot prepare a sandbox directory under the data dir ${baseDir}: ${(err as Error).message}` };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
