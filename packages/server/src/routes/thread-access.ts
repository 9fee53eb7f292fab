import type { RunRecord, ThreadRecord } from "@deerflow-ts/harness";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { userOf } from "../auth";
import type { GatewayContext } from "../context";
import { runNotFound, threadNotFound } from "../http-error";
import { checkThreadId, ID_PATTERN } from "../validate";

/** The Hono context variable holding the thread a `/threads/:thread_id/*` request was authorised for. */
const THREAD_VAR = "deerflowThread";
/** The Hono context variable holding the run a `/threads/:thread_id/runs/:run_id/*` request was authorised for. */
const RUN_VAR = "deerflowRun";

/** The run {@link registerThreadAccess} authorised: its record, undefined when none is stored. */
interface RunAccess {
  runId: string;
  rec: RunRecord | undefined;
}

/** What {@link registerThreadAccess} leaves on the request context. */
interface ThreadAccess {
  threadId: string;
  /** The caller's thread row; undefined when no row exists (yet): routes decide whether that is a 404. */
  row: ThreadRecord | undefined;
  /**
   * Whether the caller may read what is stored under this thread id outside
   * its own user folder (checkpoints, run records, transcript): always for an
   * owned row; for an id without a row only for the owner of ownerless data
   * (see {@link ownerOf}), since nothing says whose checkpoints those are.
   */
  readable: boolean;
}

/**
 * The user a stored row belongs to. Rows written without an owner (an empty
 * `user_id`, from before threads were recorded per user) belong to the
 * auth-disabled user (`options.userId`, `default`): with sign-in on, no
 * account has that id, so they are nobody's rather than everybody's.
 */
export function ownerOf(ctx: GatewayContext, storedUserId: string | null | undefined): string {
  return storedUserId || ctx.options.userId;
}

/** True when the stored owner id is this request's caller. */
export function isOwnedByCaller(ctx: GatewayContext, c: Context, storedUserId: string | null | undefined): boolean {
  return ownerOf(ctx, storedUserId) === userOf(c).id;
}

/** Path segments under `/threads/:id/runs/` that are routes, not run ids. */
const RUN_ROUTE_WORDS = new Set(["stream", "wait", "regenerate", "edit-regenerate"]);

/**
 * The authorisation point of every per-thread route: the thread of each
 * `/threads/:thread_id` and `/threads/:thread_id/*` request is loaded and
 * checked against the caller ({@link userOf}) once, before any route runs.
 * The id is validated, and a thread owned by another user is answered 404
 * (as if it did not exist) for every sub-resource — state, history, runs,
 * uploads, artifacts, transcript. Likewise for runs: a run of
 * `/threads/:thread_id/runs/:run_id[/*]` recorded for another user is 404.
 * Routes read the results with {@link threadOf} and {@link runOf}.
 */
export function registerThreadAccess(app: Hono, ctx: GatewayContext): void {
  const authorise: MiddlewareHandler = async (c, next) => {
    const raw = c.req.param("thread_id");
    // `POST /threads/search` and friends share the pattern; they are not a thread.
    // A malformed id is left to the route, which answers it in its own way (422, or 400 on upload routes).
    if (raw === undefined || raw === "search" || raw === "count" || !ID_PATTERN.test(raw)) return next();
    const threadId = raw;
    const row = await ctx.stores.threads.get(threadId);
    if (row && !isOwnedByCaller(ctx, c, row.userId)) throw threadNotFound(threadId);
    const readable = !!row || userOf(c).id === ctx.options.userId;
    c.set(THREAD_VAR as never, { threadId, row, readable } satisfies ThreadAccess as never);
    return next();
  };
  app.use("/threads/:thread_id", authorise);
  app.use("/threads/:thread_id/*", authorise);

  const authoriseRun: MiddlewareHandler = async (c, next) => {
    const raw = c.req.param("run_id");
    if (raw === undefined || RUN_ROUTE_WORDS.has(raw) || !ID_PATTERN.test(raw)) return next();
    const rec = await ctx.stores.runs.get(raw);
    // another user's run is unknown, whichever thread it is asked under
    if (rec && !isOwnedByCaller(ctx, c, rec.userId)) throw runNotFound(raw);
    c.set(RUN_VAR as never, { runId: raw, rec } satisfies RunAccess as never);
    return next();
  };
  app.use("/threads/:thread_id/runs/:run_id", authoriseRun);
  app.use("/threads/:thread_id/runs/:run_id/*", authoriseRun);
}

/** The authorised thread of this request (set by {@link registerThreadAccess}). */
export function threadOf(c: Context): ThreadAccess {
  const access = c.get(THREAD_VAR as never) as ThreadAccess | undefined;
  if (access) return access;
  // Routes mounted outside the middleware's patterns validate the id themselves; nothing was authorised.
  return { threadId: checkThreadId(c.req.param("thread_id") ?? ""), row: undefined, readable: false };
}

/** The authorised thread row, or 404. */
export function requireThreadRow(c: Context): ThreadRecord {
  const { threadId, row } = threadOf(c);
  if (!row) throw threadNotFound(threadId);
  return row;
}

/**
 * The thread id of a route that reads what is stored under it (checkpoints,
 * runs, transcript), or 404 when the caller may not (see `ThreadAccess.readable`).
 */
export function readableThreadId(c: Context): string {
  const { threadId, readable } = threadOf(c);
  if (!readable) throw threadNotFound(threadId);
  return threadId;
}

/**
 * The run of `/threads/:thread_id/runs/:run_id[/*]` as the middleware loaded
 * it (a stored record is the caller's); undefined when the middleware did not
 * run for this request.
 */
export function runOf(c: Context): RunAccess | undefined {
  return c.get(RUN_VAR as never) as RunAccess | undefined;
}

/**
 * The caller's run `runId` of thread `threadId`, or 404 (unknown, another
 * thread's, or another user's).
 */
export async function requireRun(ctx: GatewayContext, c: Context, threadId: string, runId: string): Promise<RunRecord> {
  const access = runOf(c);
  const rec = access && access.runId === runId ? access.rec : await ctx.stores.runs.get(runId);
  if (!rec || rec.threadId !== threadId || !isOwnedByCaller(ctx, c, rec.userId)) throw runNotFound(runId);
  return rec;
}
