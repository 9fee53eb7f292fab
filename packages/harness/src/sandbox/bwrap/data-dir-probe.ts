import { execFile, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { buildBwrapCommand } from "./argv";
import { findBinary } from "./find-binary";
import { findBwrapTools, probeBwrap, rememberBwrapWorks } from "./probe";
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

/** What the data dir probe runs: a scratch workspace under the data dir and the bwrap argv that binds it. */
interface ScratchRun {
  scratch: string;
  argv: string[];
}

type ProbeOptions = { baseDir: string; runAs?: { uid: number; gid: number }; bwrapPath?: string };

function cacheKey(options: ProbeOptions, baseDir: string): string {
  return `${options.bwrapPath ?? ""}:${options.runAs?.uid ?? "self"}:${baseDir}`;
}

/**
 * Start a real sandbox against the REAL data dir: create a scratch directory
 * under `baseDir` owned by the sandbox uid, bind it exactly as a thread's
 * workspace is bound, write and read a file inside bwrap, clean up. Catches
 * what the bind-less {@link probeBwrap} cannot: a data dir the sandbox uid
 * cannot reach. The failure reason names the blocking directory. Cached per
 * data dir and uid.
 *
 * A sandbox that starts with a bind proves the bind-less profile works as well, so on success this
 * starts one bwrap, not two; the basic probe runs only to explain a failure.
 */
export function probeBwrapDataDir(options: ProbeOptions): BwrapDataDirProbe {
  const baseDir = path.resolve(options.baseDir);
  const key = cacheKey(options, baseDir);
  const hit = cache.get(key);
  if (hit) return hit;
  const tools = findBwrapTools(options);
  let result: BwrapDataDirProbe;
  if (!tools.ok || !tools.bwrapPath) {
    result = { ...tools, baseDir };
  } else {
    const { stage, blocker } = bindStrategy(baseDir, options.runAs);
    if (blocker && !stage) {
      const basic = probeBwrap(options);
      result = basic.ok
        ? {
            ...basic,
            ok: false,
            baseDir,
            blocker,
            reason: `the sandbox uid ${options.runAs?.uid} cannot enter ${blocker} (above the data dir ${baseDir}), and unshare/mount to stage the binds were not found`,
          }
        : { ...basic, baseDir };
    } else {
      const scratch = runScratchSandbox(tools, baseDir, stage, options.runAs);
      if (scratch.ok) {
        rememberBwrapWorks(options, tools);
        result = { ...scratch, stage, blocker };
      } else {
        const basic = probeBwrap(options);
        result = basic.ok ? { ...scratch, stage, blocker } : { ...basic, baseDir };
      }
    }
  }
  if (result.ok) cache.set(key, result);
  return result;
}

/**
 * Run the data dir probe without blocking the event loop, so that a server starting up does the
 * rest of its work (storage, config, the HTTP listener) while bwrap starts. Only a success is
 * remembered: {@link probeBwrapDataDir} then answers from its cache, and after a failure it runs
 * again and explains it. Never throws.
 */
export async function prefetchBwrapDataDirProbe(options: ProbeOptions): Promise<void> {
  const baseDir = path.resolve(options.baseDir);
  const key = cacheKey(options, baseDir);
  if (cache.has(key)) return;
  const tools = findBwrapTools(options);
  if (!tools.ok || !tools.bwrapPath) return;
  const { stage, blocker } = bindStrategy(baseDir, options.runAs);
  if (blocker && !stage) return;
  let run: ScratchRun | undefined;
  try {
    run = prepareScratch(tools, baseDir, stage, options.runAs);
    const argv = run.argv;
    // a non-zero exit, a signal or a spawn failure all arrive as `err`
    const r = await new Promise<{ ok: boolean; stdout: string }>((resolve) => {
      execFile(argv[0] as string, argv.slice(1), { cwd: "/", timeout: 10_000, encoding: "utf8", env: { PATH: "/usr/bin:/bin" } }, (err, stdout) => resolve({ ok: !err, stdout }));
    });
    if (r.ok && r.stdout.trim() === "ok") {
      rememberBwrapWorks(options, tools);
      cache.set(key, { ...tools, baseDir, stage, blocker });
    }
  } catch {
    // the blocking probe runs again and reports why
  } finally {
    if (run) await rm(run.scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

function prepareScratch(basic: BwrapProbe, baseDir: string, stage: StageTools | undefined, runAs: { uid: number; gid: number } | undefined): ScratchRun {
  mkdirSync(baseDir, { recursive: true });
  const scratch = mkdtempSync(path.join(baseDir, ".sandbox-probe-"));
  try {
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
    return { scratch, argv };
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}

function runScratchSandbox(basic: BwrapProbe, baseDir: string, stage: StageTools | undefined, runAs: { uid: number; gid: number } | undefined): BwrapDataDirProbe {
  let run: ScratchRun | undefined;
  try {
    run = prepareScratch(basic, baseDir, stage, runAs);
    const argv = run.argv;
    const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: "/", timeout: 10_000, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: "/usr/bin:/bin" } });
    if (r.status === 0 && r.stdout.trim() === "ok") return { ...basic, baseDir };
    const why = (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim();
    return { ...basic, ok: false, baseDir, reason: `bwrap cannot bind a directory of the data dir ${baseDir}: ${why}` };
  } catch (err) {
    return { ...basic, ok: false, baseDir, reason: `cannot prepare a sandbox directory under the data dir ${baseDir}: ${(err as Error).message}` };
  } finally {
    if (run) rmSync(run.scratch, { recursive: true, force: true });
  }
}
