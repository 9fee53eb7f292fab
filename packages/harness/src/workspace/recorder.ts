import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { ValidationError } from "../errors";
import { writeFileAtomicSync } from "../fs";
import { SAFE_ID, VIRTUAL_OUTPUTS, VIRTUAL_WORKSPACE } from "../sandbox";
import type { ThreadDirs } from "../sandbox";
import { compareSnapshots } from "./diff";
import { scanWorkspaceRoots } from "./scanner";
import type { BlobCache, WorkspaceRoot } from "./scanner";
import { DEFAULT_WORKSPACE_CHANGE_LIMITS, emptySummary } from "./types";
import type { WorkspaceChangeLimits, WorkspaceChangeResult, WorkspaceChangesResponse, WorkspaceSnapshot } from "./types";

/** Options of {@link recordRunWorkspace}. */
export interface RecordWorkspaceOptions {
  limits?: Partial<WorkspaceChangeLimits>;
  /**
   * `end` of a run whose start found no files and no earlier snapshot (so
   * nothing was written then): compare against an empty snapshot.
   */
  emptyStart?: boolean;
}

/**
 * True when the thread has never had a snapshot and outputs + workspace hold
 * nothing: a run starting there has nothing to record (the common case of a
 * chat that writes no files), so the hot path writes nothing at all.
 */
export function workspaceIsPristine(dirs: ThreadDirs): boolean {
  // Most threads never get a file: one stat of the thread's directory answers for them (no failing readdirs).
  if (!statSync(path.dirname(dirs.userData), { throwIfNoEntry: false })) return true;
  if (existsSync(path.join(workspaceChangesDir(dirs), "latest.json"))) return false;
  for (const dir of [dirs.outputs, dirs.workspace]) {
    try {
      if (readdirSync(dir).length) return false;
    } catch {
      // missing: nothing there
    }
  }
  return true;
}

/** Which end of the run a snapshot is taken at. */
export type WorkspacePhase = "start" | "end";

/**
 * Where a thread's snapshots live: beside `user-data`, never inside it, so the
 * agent cannot read or forge them and they are not themselves reported as changes.
 */
export function workspaceChangesDir(dirs: ThreadDirs): string {
  return path.join(path.dirname(dirs.userData), "workspace-changes");
}

function emptySnapshot(): WorkspaceSnapshot {
  return { files: {}, truncated: false };
}

function checkRunId(runId: string): string {
  if (!SAFE_ID.test(runId)) throw new ValidationError(`Invalid run id ${JSON.stringify(runId)}`, { code: "invalid_run_id" });
  return runId;
}

/** Cached texts beyond this many bytes are not kept (those files are listed without a diff). */
const MAX_CACHED_TEXT_BYTES = 32 * 1024 * 1024;

/**
 * The texts of a thread's snapshots in ONE file (`texts.json`, sha256 → text),
 * read once and written once per phase: creating a file per text costs about
 * a millisecond each on common filesystems, which a run start cannot afford.
 */
class PackedTexts implements BlobCache {
  private texts: Record<string, string>;
  private bytes = 0;
  private dirty = false;

  constructor(private readonly file: string) {
    this.texts = readJson<Record<string, string>>(file) ?? {};
    for (const t of Object.values(this.texts)) this.bytes += t.length;
  }

  has(sha: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.texts, sha);
  }

  put(sha: string, text: string): boolean {
    if (this.bytes + text.length > MAX_CACHED_TEXT_BYTES) return false;
    this.texts[sha] = text;
    this.bytes += text.length;
    this.dirty = true;
    return true;
  }

  get(sha: string): string | undefined {
    return this.has(sha) ? this.texts[sha] : undefined;
  }

  /** Keep only the texts `live` refers to. */
  retain(live: Set<string>): void {
    for (const sha of Object.keys(this.texts)) {
      if (live.has(sha)) continue;
      this.bytes -= this.texts[sha].length;
      delete this.texts[sha];
      this.dirty = true;
    }
  }

  save(): void {
    if (this.dirty) writeAtomic(this.file, JSON.stringify(this.texts));
    this.dirty = false;
  }
}

/**
 * The shared atomic write: a snapshot is the baseline of the next run's
 * changes, so it must never be half written. Not fsynced (`durable: false`):
 * these files are rewritten at the start and end of every run and a lost one
 * only costs a rescan, while three fsyncs would add ~15 ms to every run.
 */
function writeAtomic(target: string, text: string): void {
  writeFileAtomicSync(target, text, { durable: false });
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

function roots(dirs: ThreadDirs): WorkspaceRoot[] {
  return [
    { name: "outputs", hostPath: dirs.outputs, virtualPrefix: VIRTUAL_OUTPUTS },
    { name: "workspace", hostPath: dirs.workspace, virtualPrefix: VIRTUAL_WORKSPACE },
  ];
}

/**
 * Record one end of a run. `start` snapshots outputs + workspace (sizes,
 * nanosecond mtimes, hashes; texts of small text files into a
 * content-addressed cache), reusing the previous run's end snapshot for files
 * that did not change since. `end` snapshots again, compares, stores the
 * run's changes with unified diffs, keeps its snapshot for the next run and
 * drops cached texts nothing refers to any more. Returns the changes on `end`
 * (undefined when the run's start was never recorded).
 */
export async function recordRunWorkspace(
  dirs: ThreadDirs,
  runId: string,
  phase: WorkspacePhase,
  options: RecordWorkspaceOptions = {},
): Promise<WorkspaceChangeResult | undefined> {
  checkRunId(runId);
  const limits = { ...DEFAULT_WORKSPACE_CHANGE_LIMITS, ...options.limits };
  const store = workspaceChangesDir(dirs);
  const runsDir = path.join(store, "runs");
  const blobs = new PackedTexts(path.join(store, "texts.json"));
  const latestFile = path.join(store, "latest.json");
  const startFile = path.join(runsDir, `${runId}.start.json`);
  mkdirSync(runsDir, { recursive: true });
  const latest = readJson<WorkspaceSnapshot>(latestFile);
  if (phase === "start") {
    const snap = scanWorkspaceRoots(roots(dirs), limits, blobs, latest);
    blobs.save();
    writeAtomic(startFile, JSON.stringify(snap));
    return undefined;
  }
  const before = options.emptyStart ? emptySnapshot() : readJson<WorkspaceSnapshot>(startFile);
  if (!before) return undefined;
  const after = scanWorkspaceRoots(roots(dirs), limits, blobs, before);
  const result = compareSnapshots(before, after, blobs, limits);
  writeAtomic(path.join(runsDir, `${runId}.json`), JSON.stringify(result));
  writeAtomic(latestFile, JSON.stringify(after));
  if (!options.emptyStart) unlinkSync(startFile);
  blobs.retain(liveTexts(runsDir, after));
  blobs.save();
  return result;
}

/** Texts still needed: the latest snapshot's, and those of runs on this thread still in flight. */
function liveTexts(runsDir: string, latest: WorkspaceSnapshot): Set<string> {
  const live = new Set<string>();
  for (const f of Object.values(latest.files)) if (f.sha256) live.add(f.sha256);
  for (const name of readdirSync(runsDir)) {
    if (!name.endsWith(".start.json")) continue;
    const snap = readJson<WorkspaceSnapshot>(path.join(runsDir, name));
    for (const f of Object.values(snap?.files ?? {})) if (f.sha256) live.add(f.sha256);
  }
  return live;
}

/** The empty answer for a run with nothing recorded (still running, or never snapshotted). */
export function unavailableWorkspaceChanges(): WorkspaceChangesResponse {
  return { available: false, version: 1, summary: emptySummary(), files: [], limits: {} };
}

/**
 * The stored changes of a run, shaped as the workspace-changes route answers:
 * without `include_files` the file list is empty; without `include_diff`
 * every `diff` is "".
 */
export function readRunWorkspaceChanges(
  dirs: ThreadDirs,
  runId: string,
  options: { includeFiles?: boolean; includeDiff?: boolean; runFinished?: boolean } = {},
): WorkspaceChangesResponse {
  checkRunId(runId);
  const result = readJson<WorkspaceChangeResult>(path.join(workspaceChangesDir(dirs), "runs", `${runId}.json`));
  if (!result) {
    // A finished run on a thread that never had files wrote nothing (see workspaceIsPristine): it changed nothing.
    if (options.runFinished && workspaceIsPristine(dirs)) return { available: true, version: 1, summary: emptySummary(), files: [], limits: {} };
    return unavailableWorkspaceChanges();
  }
  const includeFiles = options.includeFiles ?? true;
  const includeDiff = options.includeDiff ?? true;
  const files = !includeFiles ? [] : includeDiff ? result.files : result.files.map((f) => ({ ...f, diff: "" }));
  return { available: true, version: 1, summary: result.summary, files, limits: result.limits };
}

/** Drop a run's recorded changes (e.g. when the run is deleted). */
export function deleteRunWorkspaceChanges(dirs: ThreadDirs, runId: string): void {
  checkRunId(runId);
  const runsDir = path.join(workspaceChangesDir(dirs), "runs");
  rmSync(path.join(runsDir, `${runId}.json`), { force: true });
  rmSync(path.join(runsDir, `${runId}.start.json`), { force: true });
}
