import type { ThreadRecord } from "@deerflow/harness";
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { GatewayContext } from "../context";
import { threadNotFound } from "../http-error";
import { checkThreadId, ID_PATTERN } from "../validate";

/** The Hono context variable holding the thread row a `/threads/:thread_id/*` request was authorised for. */
const THREAD_VAR = "deerflowThread";

/** What {@link registerThreadAccess} leaves on the request context. */
interface ThreadAccess {
  threadId: string;
  /** The caller's thread row; undefined when no row exists (yet): routes decide whether that is a 404. */
  row: ThreadRecord | undefined;
}

/**
 * Load and authorise the thread of every `/threads/:thread_id` and
 * `/threads/:thread_id/*` request once, before any route runs: the id is
 * validated, and a thread owned by another user is answered 404 (as if it
 * did not exist) for every sub-resource — state, history, runs, uploads,
 * artifacts, transcript. Routes read the result with {@link threadOf}. The
 * caller's identity is `options.userId` today; an auth layer only has to
 * supply a different user.
 */
export function registerThreadAccess(app: Hono, ctx: GatewayContext): void {
  const authorise: MiddlewareHandler = async (c, next) => {
    const raw = c.req.param("thread_id");
    // `POST /threads/search` and friends share the pattern; they are not a thread.
    // A malformed id is left to the route, which answers it in its own way (422, or 400 on upload routes).
    if (raw === undefined || raw === "search" || raw === "count" || !ID_PATTERN.test(raw)) return next();
    const threadId = raw;
    const row = await ctx.stores.threads.get(threadId);
    if (row && row.userId && row.userId !== ctx.options.userId) throw threadNotFound(threadId);
    c.set(THREAD_VAR as never, { threadId, row } satisfies ThreadAccess as never);
    return next();
  };
  app.use("/threads/:thread_id", authorise);
  app.use("/threads/:thread_id/*", authorise);
}

/** The authorised thread of this request (set by {@link registerThreadAccess}). */
export function threadOf(c: Context): ThreadAccess {
  const access = c.get(THREAD_VAR as never) as ThreadAccess | undefined;
  if (access) return access;
  // Routes mounted outside the middleware's patterns validate the id themselves.
  return { threadId: checkThreadId(c.req.param("thread_id") ?? ""), row: undefined };
}

/** The authorised thread row, or 404. */
export function requireThreadRow(c: Context): ThreadRecord {
  const { threadId, row } = threadOf(c);
  if (!row) throw threadNotFound(threadId);
  return row;
}
