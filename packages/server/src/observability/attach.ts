import type { Context, Hono } from "hono";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { createAccessLogMiddleware } from "./access-log";
import type { Logger } from "./logger";
import { openMetrics } from "./metrics";
import type { GatewayMetrics } from "./metrics";
import type { PricedModel } from "./pricing";
import { createRunLogHook } from "./run-log";
import { observabilitySettings } from "./settings";
import type { ObservabilityConfig } from "./settings";

/** What {@link attachObservability} turns on. */
export interface ObservabilityAttachOptions {
  /** Access lines, request ids and run lines (none without a logger). */
  logger?: Logger;
  /** `/metrics`; default `metrics.enabled` of the config at start. */
  metrics?: boolean;
}

/** A scrape with sign-in on needs a personal access token with the `admin` scope (the figures span every user). */
async function checkScraper(c: Context, ctx: GatewayContext): Promise<void> {
  if (!ctx.auth.settings().enabled) return;
  const header = c.req.header("authorization") ?? "";
  const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  const owner = bearer ? await ctx.auth.users().tokens.resolve(bearer, ctx.auth.now()) : undefined;
  if (!owner) throw new HttpError(401, "GET /metrics needs Authorization: Bearer <personal access token with the 'admin' scope> while sign-in is on", { "WWW-Authenticate": 'Bearer realm="metrics"' });
  if (!owner.token.scopes.includes("admin")) throw new HttpError(403, "GET /metrics needs a personal access token with the 'admin' scope", { "WWW-Authenticate": 'Bearer error="insufficient_scope", scope="admin"' });
}

/**
 * The gateway's observability on `app`, before any route: the access log
 * (first, so refused requests are logged too), the run log hook, and with
 * metrics on the request counter, the run hook and `GET /metrics`. Returns
 * the metrics when they are on.
 */
export async function attachObservability(app: Hono, ctx: GatewayContext, options: ObservabilityAttachOptions): Promise<GatewayMetrics | undefined> {
  const { logger } = options;
  const config = (ctx.runtime.config() ?? ctx.options.appConfig) as (ObservabilityConfig & { models?: PricedModel[] }) | undefined;
  if (logger) {
    app.use("*", createAccessLogMiddleware({ logger, authEnabled: () => ctx.auth.settings().enabled }));
    ctx.runtime.recorder.addHook(createRunLogHook({ logger, stores: ctx.stores, models: () => ((ctx.runtime.config() ?? ctx.options.appConfig) as { models?: PricedModel[] } | undefined)?.models }));
  }
  if (!(options.metrics ?? observabilitySettings(config).metricsEnabled)) return undefined;
  const metrics = await openMetrics({ runtime: ctx.runtime, stores: ctx.stores });
  app.use("*", metrics.middleware);
  ctx.runtime.recorder.addHook(metrics.runHook);
  app.get("/metrics", async (c) => {
    await checkScraper(c, ctx);
    return c.body(await metrics.text(), 200, { "Content-Type": metrics.contentType });
  });
  return metrics;
}
