import { randomUUID } from "node:crypto";
import type { ScheduledRunLauncher, ScheduledTask } from "@deerflow-ts/harness/scheduler";
import type { GatewayContext } from "../context";
import { createRun } from "../runs/create-run";
import type { RunCreateRequest } from "../runs/run-request";
import { ownerOf } from "../routes/thread-access";

/**
 * Starts an occurrence's run through the same path as `POST
 * /threads/{id}/runs`: a fresh thread (owned by the task's owner) or the
 * task's thread, then {@link createRun} on the runtime's run service. The
 * run ends `success`, or `failed` with the run record's error, or
 * `interrupted` (cancelled, or the server stopped).
 */
export function createScheduledRunLauncher(ctx: GatewayContext): ScheduledRunLauncher {
  return {
    async launch(task: ScheduledTask, occurrence) {
      let threadId: string;
      if (task.contextMode === "reuse_thread") {
        if (!task.threadId) throw new Error("a reuse_thread task has no thread_id");
        const row = await ctx.stores.threads.get(task.threadId);
        if (!row || ownerOf(ctx, row.userId) !== task.userId) throw new Error(`thread ${task.threadId} no longer exists`);
        threadId = task.threadId;
      } else {
        threadId = randomUUID();
        const ts = new Date().toISOString();
        await ctx.stores.threads.create({
          threadId,
          userId: task.userId,
          status: "idle",
          metadata: { scheduled_task_id: task.id, assistant_id: task.assistantId },
          displayName: null,
          createdAt: ts,
          updatedAt: ts,
        });
      }
      const req: RunCreateRequest = {
        assistant_id: task.assistantId,
        input: { messages: [{ role: "user", content: task.prompt }] },
        metadata: { scheduled_task_id: task.id, scheduled_task_run_id: occurrence.runRowId, scheduled_trigger: occurrence.trigger, scheduled_for: occurrence.scheduledFor },
        // another run already active on a reused thread: the occurrence fails instead of interrupting the user's run
        multitask_strategy: "reject",
      };
      const handle = await createRun(ctx, threadId, req, task.userId, { waitForStore: true });
      const ended = handle.recorded.then(async () => {
        const rec = await ctx.stores.runs.get(handle.runId);
        const status = rec?.status ?? "error";
        if (status === "success") return { status: "success" as const, error: null };
        if (status === "interrupted") return { status: "interrupted" as const, error: rec?.error ?? "the run was interrupted" };
        return { status: "failed" as const, error: rec?.error ?? `the run ended with status ${status}` };
      });
      return { runId: handle.runId, threadId, ended };
    },
  };
}
