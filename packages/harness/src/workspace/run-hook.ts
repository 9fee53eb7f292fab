import { threadDirs } from "../sandbox";
import { recordRunWorkspace, workspaceIsPristine } from "./recorder";
import type { RecordWorkspaceOptions } from "./recorder";

/** The run identity a run hook receives. */
export interface WorkspaceRunRef {
  runId: string;
  threadId: string;
  userId: string;
}

/** A run hook (the runtime's run recorder calls it at run start and end). */
export interface WorkspaceChangesHook {
  readonly name: "workspace-changes";
  runStarted(run: WorkspaceRunRef): Promise<void>;
  runFinished(run: WorkspaceRunRef): Promise<void>;
}

/**
 * Record every run's workspace changes: a snapshot of outputs + workspace
 * when the run starts (awaited before the agent runs, so nothing it writes is
 * missed) and the comparison when it ends, whatever its status.
 */
export function createWorkspaceChangesHook(options: { baseDir: string } & RecordWorkspaceOptions): WorkspaceChangesHook {
  const dirs = (run: WorkspaceRunRef) => threadDirs(options.baseDir, run.threadId, run.userId);
  // Runs that started on a thread with no files and no snapshot: nothing was written at their start.
  const emptyStarts = new Set<string>();
  return {
    name: "workspace-changes",
    async runStarted(run) {
      const d = dirs(run);
      if (workspaceIsPristine(d)) {
        emptyStarts.add(run.runId);
        return;
      }
      await recordRunWorkspace(d, run.runId, "start", options);
    },
    async runFinished(run) {
      const d = dirs(run);
      if (emptyStarts.delete(run.runId)) {
        // Still nothing there: the run changed nothing, and the route says so without a stored record.
        if (workspaceIsPristine(d)) return;
        await recordRunWorkspace(d, run.runId, "end", { ...options, emptyStart: true });
        return;
      }
      await recordRunWorkspace(d, run.runId, "end", options);
    },
  };
}
