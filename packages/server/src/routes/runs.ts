import { randomUUID } from "node:crypto";
import type { Context, Hono } from "hono";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { userOf } from "../auth";
import { HttpError, threadNotFound } from "../http-error";
import { TERMINAL_RUN_STATUSES } from "@deerflow-ts/harness";
import type { RunHandle } from "@deerflow-ts/harness";
import { createRun } from "../runs/create-run";
import { runCreateRequestSchema } from "../runs/run-request";
import type { RunCreateRequest } from "../runs/run-request";
import { runResponse } from "../runs/run-response";
import { publicStateValues } from "../security";
import { endedStreamResponse, sendSse, SSE_STALL_MS } from "../sse/sse-response";
import { checkRunId, checkThreadId, readJson } from "../validate";
import { isOwnedByCaller, readableThreadId, requireRun, requireThreadRow } from "./thread-access";
import { createThreadRecord, mayClaimThreadId } from "./threads";

const cancelQuery = z.object({
  wait: z.enum(["0", "1", "true", "false"]).optional(),
  action: z.enum(["interrupt", "rollback"]).optional(),
});

function contentLocation(threadId: string, runId: string): string {
  return `/api/threads/${threadId}/runs/${runId}`;
}

/** What a stream does when its client goes away: interrupt the run (made by a call, so the closure is not named per request). */
function cancelOnDisconnect(ctx: GatewayContext, runId: string): () => void {
  return () => void ctx.runs.cancel(runId, "interrupt", false).catch(() => undefined);
}

/** The log line of a stream client disconnected for reading nothing (made by a call, not named per request). */
function stalledLog(ctx: GatewayContext, runId: string): (unread: number) => void {
  return (unread) => ctx.options.log(`[gateway] disconnected a client of run ${runId}'s stream: it read nothing for ${SSE_STALL_MS / 1000} s with ${unread} bytes unread`);
}

/** Runs endpoints (`/threads/{id}/runs`, LangGraph-compatible). */
export function registerRunRoutes(app: Hono, ctx: GatewayContext): void {
  const max = ctx.options.maxBodyBytes;

  const streamRun = (c: Context, run: RunHandle): Response =>
    sendSse(c, (push) => run.subscribe(null, push), {
      heartbeatMs: ctx.options.heartbeatMs,
      maxBacklogBytes: ctx.options.sseMaxBacklogBytes,
      onStalled: stalledLog(ctx, run.runId),
      headers: { "Content-Location": contentLocation(run.threadId, run.runId) },
      onDisconnect: run.onDisconnect === "cancel" ? cancelOnDisconnect(ctx, run.runId) : undefined,
    });

  const waitRun = async (c: Context, run: RunHandle): Promise<Response> => {
    // `done` settles when the stream ends; the record's final status may still be on its way to a store whose reads
    // do not wait for queued writes (PostgreSQL), so the answer waits for the bookkeeping.
    await run.recorded;
    const rec = await ctx.stores.runs.get(run.runId);
    c.header("Content-Location", contentLocation(run.threadId, run.runId));
    if (!rec || rec.status !== "success") return c.json({ status: rec?.status ?? "error", error: rec?.error ?? null });
    const snap = await ctx.runtime.readState(run.threadId);
    return c.json(publicStateValues(snap?.values ?? {}));
  };

  // Streaming routes start the response as soon as the thread is reserved (`waitForStore: false`).
  const threaded = async (c: Context, streaming = false): Promise<{ run: RunHandle }> => {
    const threadId = checkThreadId(c.req.param("thread_id") ?? "");
    const req = await readJson(c, runCreateRequestSchema, max);
    requireThreadRow(c); // loaded and authorised once by the thread-access middleware
    return { run: await createRun(ctx, threadId, req, userOf(c).id, { waitForStore: !streaming }) };
  };

  const stateless = async (c: Context, streaming = false): Promise<{ run: RunHandle }> => {
    const req: RunCreateRequest = await readJson(c, runCreateRequestSchema, max);
    const fromConfig = req.config?.configurable?.thread_id;
    const threadId = typeof fromConfig === "string" && fromConfig ? checkThreadId(fromConfig, ["body", "config", "configurable", "thread_id"]) : randomUUID();
    const existing = await ctx.stores.threads.get(threadId);
    if (existing && !isOwnedByCaller(ctx, c, existing.userId)) throw threadNotFound(threadId);
    if (!existing) {
      if (!(await mayClaimThreadId(ctx, c, threadId))) throw threadNotFound(threadId);
      await createThreadRecord(ctx, c, threadId, {});
    }
    return { run: await createRun(ctx, threadId, req, userOf(c).id, { waitForStore: !streaming }) };
  };

  app.post("/threads/:thread_id/runs/stream", async (c) => streamRun(c, (await threaded(c, true)).run));
  app.post("/threads/:thread_id/runs/wait", async (c) => waitRun(c, (await threaded(c)).run));
  app.post("/threads/:thread_id/runs", async (c) => {
    const { run } = await threaded(c);
    const rec = await ctx.stores.runs.get(run.runId);
    c.header("Content-Location", contentLocation(run.threadId, run.runId));
    return c.json(runResponse(rec!));
  });
  app.post("/runs/stream", async (c) => streamRun(c, (await stateless(c, true)).run));
  app.post("/runs/wait", async (c) => waitRun(c, (await stateless(c)).run));
  app.post("/runs", async (c) => {
    const { run } = await stateless(c);
    const rec = await ctx.stores.runs.get(run.runId);
    return c.json(runResponse(rec!));
  });

  app.get("/threads/:thread_id/runs", async (c) => {
    checkThreadId(c.req.param("thread_id"));
    const threadId = readableThreadId(c);
    const runs = await ctx.stores.runs.listByThread(threadId);
    return c.json(runs.filter((r) => isOwnedByCaller(ctx, c, r.userId)).map(runResponse));
  });

  // authorised by the thread-access middleware; this also checks the run belongs to this thread
  const findRun = (c: Context) =>
    requireRun(ctx, c, checkThreadId(c.req.param("thread_id") ?? ""), checkRunId(c.req.param("run_id") ?? ""));

  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(runResponse(await findRun(c))));

  const join = async (c: Context): Promise<Response> => {
    const rec = await findRun(c);
    // A run whose stream expired (or never had one) only says it ended; the bridge replays the rest from the id.
    if (!(await ctx.runs.hasStream(rec.runId))) return endedStreamResponse();
    const lastEventId = c.req.header("last-event-id") ?? null;
    return sendSse(
      c,
      (push) => ctx.runs.subscribe(rec.runId, lastEventId, push),
      {
        heartbeatMs: ctx.options.heartbeatMs,
        maxBacklogBytes: ctx.options.sseMaxBacklogBytes,
        onStalled: stalledLog(ctx, rec.runId),
        onDisconnect: () => {
          if (c.req.query("cancel_on_disconnect") === "true") void ctx.runs.cancel(rec.runId, "interrupt", false).catch(() => undefined);
        },
      },
    );
  };
  app.get("/threads/:thread_id/runs/:run_id/stream", join);
  app.get("/threads/:thread_id/runs/:run_id/join", join);

  const cancel = async (c: Context, thenStream: boolean): Promise<Response> => {
    const rec = await findRun(c);
    const q = cancelQuery.safeParse({ wait: c.req.query("wait"), action: c.req.query("action") });
    if (!q.success) throw new HttpError(422, "Invalid cancel query: wait must be 0|1 and action interrupt|rollback");
    const wait = q.data.wait === "1" || q.data.wait === "true";
    // A record that says the run ended is the answer already (the run service refuses it too, and a run that was
    // only ending when the cancel came, once its end is known).
    if (TERMINAL_RUN_STATUSES.has(rec.status)) throw new HttpError(409, `Run ${rec.runId} is not cancellable (status: ${rec.status})`);
    await ctx.runs.cancel(rec.runId, q.data.action ?? "interrupt", wait);
    if (thenStream) return join(c);
    return c.body(null, wait ? 204 : 202);
  };
  app.post("/threads/:thread_id/runs/:run_id/cancel", (c) => cancel(c, false));
  app.post("/threads/:thread_id/runs/:run_id/stream", (c) => cancel(c, true));
}
