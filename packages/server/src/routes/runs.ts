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
import { runAnswer } from "../runs/run-answer";
import { RUN_FIELDS, runResponse } from "../runs/run-response";
import { endedStreamResponse, sendSse, SSE_STALL_MS } from "../sse/sse-response";
import { checkRunId, checkThreadId, readJson } from "../validate";
import { isOwnedByCaller, readableThreadId, requireRun, requireThreadRow } from "./thread-access";
import { createThreadRecord, mayClaimThreadId } from "./threads";

/** `GET /threads/{id}/runs` query: LangGraph's paging and filter (no `limit`: every run, as DeerFlow answers). */
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]).optional(),
  select: z.array(z.enum(RUN_FIELDS)).optional(),
});

const cancelQuery = z.object({
  wait: z.enum(["0", "1", "true", "false"]).optional(),
  action: z.enum(["interrupt", "rollback"]).optional(),
});

/** Query values that mean yes (the JS SDK sends `1`/`0`, others `true`/`false`). */
const TRUE_QUERY = new Set(["1", "true"]);

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

  /** The run's final answer once it ended (see {@link runAnswer}). */
  const finalAnswer = async (c: Context, threadId: string, runId: string): Promise<Response> => {
    // `done` settles when the stream ends; the record's final status may still be on its way to a store whose reads
    // do not wait for queued writes (PostgreSQL), so the answer waits for the bookkeeping. A run of another process
    // is followed through its stream to its end.
    const local = ctx.runs.get(runId);
    if (local) await local.recorded;
    else await ctx.runs.wait(runId);
    const rec = await ctx.stores.runs.get(runId);
    c.header("Content-Location", contentLocation(threadId, runId));
    return c.json(runAnswer(rec, await ctx.runtime.readState(threadId)));
  };
  const waitRun = (c: Context, run: RunHandle): Promise<Response> => finalAnswer(c, run.threadId, run.runId);

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
    const q = listQuery.safeParse({ limit: c.req.query("limit"), offset: c.req.query("offset"), status: c.req.query("status"), select: c.req.queries("select") });
    if (!q.success) throw new HttpError(422, `Invalid runs query: ${q.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const { limit, offset = 0, status, select } = q.data;
    // newest first, as both DeerFlow and LangGraph list them
    const runs = (await ctx.stores.runs.listByThread(threadId)).filter((r) => isOwnedByCaller(ctx, c, r.userId) && (!status || r.status === status));
    const page = runs.slice(offset, limit === undefined ? undefined : offset + limit).map(runResponse);
    return c.json(select ? page.map((r) => Object.fromEntries(select.map((k) => [k, r[k]]))) : page);
  });

  // authorised by the thread-access middleware; this also checks the run belongs to this thread
  const findRun = (c: Context) =>
    requireRun(ctx, c, checkThreadId(c.req.param("thread_id") ?? ""), checkRunId(c.req.param("run_id") ?? ""));

  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(runResponse(await findRun(c))));

  const joinStream = async (c: Context): Promise<Response> => {
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
          if (TRUE_QUERY.has(c.req.query("cancel_on_disconnect") ?? "")) void ctx.runs.cancel(rec.runId, "interrupt", false).catch(() => undefined);
        },
      },
    );
  };
  app.get("/threads/:thread_id/runs/:run_id/stream", joinStream);
  // LangGraph's `join` waits for the run and answers its final values as JSON; a client that asks for an event
  // stream (DeerFlow's own `join`) still gets the run's stream.
  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) return joinStream(c);
    const rec = await findRun(c);
    if (!TERMINAL_RUN_STATUSES.has(rec.status) && TRUE_QUERY.has(c.req.query("cancel_on_disconnect") ?? "")) {
      c.req.raw.signal.addEventListener("abort", () => void ctx.runs.cancel(rec.runId, "interrupt", false).catch(() => undefined), { once: true });
    }
    return finalAnswer(c, rec.threadId, rec.runId);
  });

  const cancel = async (c: Context, thenStream: boolean): Promise<Response> => {
    const rec = await findRun(c);
    const q = cancelQuery.safeParse({ wait: c.req.query("wait"), action: c.req.query("action") });
    if (!q.success) throw new HttpError(422, "Invalid cancel query: wait must be 0|1 and action interrupt|rollback");
    const wait = q.data.wait === "1" || q.data.wait === "true";
    // A record that says the run ended is the answer already (the run service refuses it too, and a run that was
    // only ending when the cancel came, once its end is known).
    if (TERMINAL_RUN_STATUSES.has(rec.status)) throw new HttpError(409, `Run ${rec.runId} is not cancellable (status: ${rec.status})`);
    await ctx.runs.cancel(rec.runId, q.data.action ?? "interrupt", wait);
    if (thenStream) return joinStream(c);
    return c.body(null, wait ? 204 : 202);
  };
  app.post("/threads/:thread_id/runs/:run_id/cancel", (c) => cancel(c, false));
  app.post("/threads/:thread_id/runs/:run_id/stream", (c) => cancel(c, true));
}
