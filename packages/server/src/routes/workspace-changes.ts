import { readRunWorkspaceChanges, TERMINAL_RUN_STATUSES, threadDirs, unavailableWorkspaceChanges } from "@deerflow-ts/harness";
import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { validationError } from "../http-error";
import { checkRunId, checkThreadId } from "../validate";
import { userOf } from "../auth";
import { runOf } from "./thread-access";

function queryBool(raw: string | undefined, name: string): boolean {
  if (raw === undefined || raw === "") return true;
  const v = raw.toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  throw validationError([{ type: "bool_parsing", loc: ["query", name], msg: "Input should be a valid boolean, unable to interpret input", input: raw }]);
}

/**
 * `GET /threads/{tid}/runs/{rid}/workspace-changes`: what the run created,
 * modified or deleted under outputs and workspace, read from the snapshot
 * pair recorded at run start and end (nothing is scanned per request). A run
 * with nothing recorded answers `available: false`, as DeerFlow does.
 */
export function registerWorkspaceChangesRoutes(app: Hono, ctx: GatewayContext): void {
  app.get("/threads/:thread_id/runs/:run_id/workspace-changes", async (c) => {
    const threadId = checkThreadId(c.req.param("thread_id"));
    const runId = checkRunId(c.req.param("run_id"));
    const includeFiles = queryBool(c.req.query("include_files"), "include_files");
    const includeDiff = queryBool(c.req.query("include_diff"), "include_diff");
    // the thread and the run were authorised by the thread-access middleware (another user's: 404)
    const run = runOf(c)?.rec;
    // another thread's run id must not reveal that run's files
    if (run && run.threadId !== threadId) return c.json(unavailableWorkspaceChanges());
    // the caller's own copy of the thread's files: another user's files are not under this path
    const dirs = threadDirs(ctx.options.baseDir, threadId, userOf(c).id);
    const runFinished = !!run && TERMINAL_RUN_STATUSES.has(run.status);
    return c.json(readRunWorkspaceChanges(dirs, runId, { includeFiles, includeDiff, runFinished }));
  });
}
