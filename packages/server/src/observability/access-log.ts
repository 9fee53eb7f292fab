import type { MiddlewareHandler } from "hono";
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import { maybeUserOf } from "../auth/request-user";
import type { Logger } from "./logger";
import { acceptRequestId, REQUEST_ID_HEADER, setRequestId } from "./request-id";

/**
 * The pattern of the route the request matched (`/api/threads/:thread_id/state`), also when a middleware refused it
 * before its handler ran; `(unmatched)` when only the catch-all middlewares matched (a 404 of no route of ours).
 */
export function routePattern(c: Context): string {
  const routes = matchedRoutes(c);
  // the route that answered; when a middleware answered (a refusal), the first route it stood in front of
  for (let i = Math.max(0, c.req.routeIndex); i < routes.length; i++) if (routes[i].method !== "ALL") return routes[i].path;
  return "(unmatched)";
}

/** What {@link createAccessLogMiddleware} needs. */
export interface AccessLogOptions {
  logger: Logger;
  /** Whether sign-in is on now: only then does a line name the user (off, every caller is the same local user). */
  authEnabled: () => boolean;
  /** Clock in ms with a fraction (tests); default `performance.now`. */
  now?: () => number;
}

/**
 * One access line per request (`msg: "request"`, level `info`; `warn` for a
 * 5xx): method, the matched route pattern (`/api/threads/:thread_id/runs`,
 * never the ids), status, duration in ms, request id, and the user id when
 * sign-in is on. Sets `X-Request-Id` on every answer, errors included. Put it
 * first, so requests the guard or the sign-in refuses are logged too.
 */
export function createAccessLogMiddleware(options: AccessLogOptions): MiddlewareHandler {
  if (!options?.logger || typeof options.authEnabled !== "function") throw new TypeError("createAccessLogMiddleware needs {logger, authEnabled}");
  const { logger, authEnabled } = options;
  const now = options.now ?? (() => performance.now());
  return async (c, next) => {
    const start = now();
    const id = acceptRequestId(c.req.header(REQUEST_ID_HEADER));
    setRequestId(c, id);
    try {
      await next();
    } finally {
      c.res.headers.set(REQUEST_ID_HEADER, id);
      const status = c.res.status;
      const line: Record<string, unknown> = {
        component: "access",
        method: c.req.method,
        route: routePattern(c),
        status,
        duration_ms: Math.round((now() - start) * 100) / 100,
        request_id: id,
      };
      if (authEnabled()) {
        const user = maybeUserOf(c);
        if (user) line.user_id = user.id;
      }
      if (status >= 500) logger.warn(line, "request");
      else logger.info(line, "request");
    }
  };
}
