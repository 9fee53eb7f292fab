import { randomUUID } from "node:crypto";
import type { Context, Hono } from "hono";
import { z } from "zod";
import path from "node:path";
import {
  DeerFlowError,
  InvalidUpdateError,
  removeTree,
  threadDetailResponse,
  threadPaths,
  threadRecordResponse,
  threadSummaryResponse,
} from "@deerflow-ts/harness";
import type { StateSnapshot, ThreadRecord } from "@deerflow-ts/harness";
import type { GatewayContext } from "../context";
import { HttpError, threadNotFound } from "../http-error";
import { checkThreadId, readJson } from "../validate";
import { userOf } from "../auth";
import { isOwnedByCaller, ownerOf, readableThreadId, requireThreadRow, threadOf } from "./thread-access";
import { publicStateValues } from "../security";
import { historyEntry, stateResponse } from "./thread-views";
import { searchThreads, THREAD_FIELDS } from "./thread-search";

const createSchema = z.looseObject({
  thread_id: z.string().nullable().optional(),
  assistant_id: z.string().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  // LangGraph's: `raise` answers 409 for an existing id, `do_nothing` the existing thread (also what no value does)
  if_exists: z.enum(["raise", "do_nothing"]).nullable().optional(),
  // seeding a thread with super-steps is not supported: refused rather than creating an empty thread
  supersteps: z.unknown().refine((v) => v === null || v === undefined || (Array.isArray(v) && v.length === 0), { message: "supersteps is not supported" }).optional(),
});

const searchSchema = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  ids: z.array(z.string()).max(1000).nullable().optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  offset: z.number().int().min(0).optional(),
  status: z.string().nullable().optional(),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).nullable().optional(),
  sort_order: z.enum(["asc", "desc"]).nullable().optional(),
  select: z.array(z.enum(THREAD_FIELDS)).nullable().optional(),
  // filters on state values are not supported: refused rather than answering unfiltered rows
  values: z.record(z.string(), z.unknown()).refine((v) => !Object.keys(v).length, { message: "filtering threads by values is not supported" }).nullable().optional(),
});

const countSchema = z.looseObject({ metadata: z.record(z.string(), z.unknown()).nullable().optional(), status: z.string().nullable().optional() });

const patchSchema = z.looseObject({ metadata: z.record(z.string(), z.unknown()).optional() });

const stateUpdateSchema = z.looseObject({
  values: z.record(z.string(), z.unknown()).nullable().optional(),
  checkpoint_id: z.string().nullable().optional(),
  checkpoint: z.looseObject({ checkpoint_id: z.string().optional() }).nullable().optional(),
  as_node: z.string().nullable().optional(),
});

const historySchema = z.looseObject({
  limit: z.number().int().min(1).max(100).optional(),
  before: z.union([z.string(), z.looseObject({ configurable: z.looseObject({ checkpoint_id: z.string().optional() }).optional() })]).nullable().optional(),
});

const SAFE_METADATA_KEY = /^[A-Za-z0-9_.-]{1,128}$/;
const SERVER_OWNED_KEYS = new Set(["user_id", "owner_id"]);

function cleanMetadata(meta: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta ?? {})) if (!SERVER_OWNED_KEYS.has(k)) out[k] = v;
  return out;
}

/**
 * Whether the caller may create the row of a thread id that has none: not
 * when checkpoints are already stored under it (written without a row, so
 * the auth-disabled user's, see `ownerOf`), else a row would hand another
 * user's conversation to the caller.
 */
export async function mayClaimThreadId(ctx: GatewayContext, c: Context, threadId: string): Promise<boolean> {
  if (userOf(c).id === ctx.options.userId) return true;
  return (await ctx.runtime.readState(threadId)) === undefined;
}

/** Create a thread row owned by the caller. */
export async function createThreadRecord(ctx: GatewayContext, c: Context, threadId: string, metadata: Record<string, unknown>): Promise<ThreadRecord> {
  const ts = new Date().toISOString();
  const rec: ThreadRecord = { threadId, userId: userOf(c).id, status: "idle", metadata, displayName: null, createdAt: ts, updatedAt: ts };
  await ctx.stores.threads.create(rec);
  return rec;
}


/** Threads endpoints (`/threads`, LangGraph-compatible). */
export function registerThreadRoutes(app: Hono, ctx: GatewayContext): void {
  const max = ctx.options.maxBodyBytes;

  app.post("/threads", async (c) => {
    const body = await readJson(c, createSchema, max);
    const threadId = body.thread_id ? checkThreadId(body.thread_id, ["body", "thread_id"]) : randomUUID();
    const existing = await ctx.stores.threads.get(threadId);
    if (existing) {
      // (the id space is shared: another user's id is taken, but nothing of that thread is answered)
      if (!isOwnedByCaller(ctx, c, existing.userId) || body.if_exists === "raise") throw new HttpError(409, `Thread ${threadId} already exists`);
      return c.json(threadRecordResponse(existing));
    }
    if (!(await mayClaimThreadId(ctx, c, threadId))) throw new HttpError(409, `Thread ${threadId} already exists`);
    const meta = cleanMetadata(body.metadata);
    if (body.assistant_id && meta.assistant_id === undefined) meta.assistant_id = body.assistant_id;
    const rec = await createThreadRecord(ctx, c, threadId, meta);
    return c.json(threadRecordResponse(rec));
  });

  /** The metadata filter of a search/count body (scalar values on safe keys only). */
  const metadataFilter = (metadata: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined => {
    if (!metadata || !Object.keys(metadata).length) return undefined;
    const filter: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(metadata)) {
      if (SAFE_METADATA_KEY.test(k) && (v === null || ["string", "number", "boolean"].includes(typeof v))) filter[k] = v;
    }
    if (!Object.keys(filter).length) throw new HttpError(400, "All metadata filter keys are invalid or unsafe");
    return filter;
  };

  // Only the caller's threads are ever searched or counted.
  app.post("/threads/search", async (c) => {
    const body = await readJson(c, searchSchema, max);
    const filter = { userId: userOf(c).id, metadata: metadataFilter(body.metadata), status: body.status ?? undefined, limit: body.limit ?? 100, offset: body.offset ?? 0 };
    const rows = await searchThreads(ctx.stores.threads, filter, { ids: body.ids ?? undefined, sortBy: body.sort_by ?? undefined, sortOrder: body.sort_order ?? undefined });
    const select = body.select;
    const answers = rows.map(threadSummaryResponse);
    return c.json(select?.length ? answers.map((t) => Object.fromEntries(select.map((k) => [k, t[k]]))) : answers);
  });

  // The LangGraph SDK's `threads.count`: a bare number.
  app.post("/threads/count", async (c) => {
    const body = await readJson(c, countSchema, max);
    const rows = await ctx.stores.threads.search({ userId: userOf(c).id, metadata: metadataFilter(body.metadata), status: body.status ?? undefined, limit: Number.MAX_SAFE_INTEGER, offset: 0 });
    return c.json(rows.length);
  });

  app.get("/threads/:thread_id", async (c) => {
    const { row: t } = threadOf(c);
    const threadId = readableThreadId(c);
    const snap = await ctx.runtime.readState(threadId);
    const response = threadDetailResponse(threadId, t, snap, ownerOf(ctx, t?.userId));
    if (!response) throw threadNotFound(threadId);
    return c.json({ ...response, values: publicStateValues(response.values) });
  });

  app.patch("/threads/:thread_id", async (c) => {
    const t = requireThreadRow(c);
    const threadId = t.threadId;
    const body = await readJson(c, patchSchema, max);
    const patch = cleanMetadata(body.metadata);
    const pinOnly = Object.keys(patch).every((k) => k === "deerflow_pinned");
    const metadata = { ...t.metadata, ...patch };
    const updatedAt = pinOnly ? t.updatedAt : new Date().toISOString();
    await ctx.stores.threads.update(threadId, { metadata, updatedAt });
    return c.json(threadRecordResponse({ ...t, metadata, updatedAt }));
  });

  app.delete("/threads/:thread_id", async (c) => {
    const { threadId, userId } = requireThreadRow(c);
    const owner = ownerOf(ctx, userId);
    if (await ctx.runs.isThreadBusy(threadId)) {
      throw new HttpError(409, `Thread has work in flight; cancel the active run of thread ${threadId} first`);
    }
    // Checkpoints go through the runtime's one checkpointer (and its state cache), so the state is gone for every reader.
    await ctx.runtime.deleteThread(threadId, owner);
    if (ctx.options.baseDir !== ctx.runtime.dataDir) {
      // {baseDir}/users/{user}/threads/{id}: the parent of the thread's user-data dir
      await removeTree(path.dirname(threadPaths(ctx.options.baseDir, owner, threadId).userData));
    }
    return c.json({ success: true, message: `Thread ${threadId} deleted` });
  });

  app.get("/threads/:thread_id/state", async (c) => {
    const threadId = readableThreadId(c);
    const snap = await ctx.runtime.readState(threadId);
    if (!snap) throw threadNotFound(threadId);
    return c.json(stateResponse(threadId, snap));
  });

  app.get("/threads/:thread_id/state/:checkpoint_id", async (c) => {
    const threadId = readableThreadId(c);
    const snap = await ctx.runtime.readState(threadId, c.req.param("checkpoint_id"));
    if (!snap) throw new HttpError(404, `Checkpoint ${c.req.param("checkpoint_id")} not found`);
    return c.json(stateResponse(threadId, snap));
  });

  app.post("/threads/:thread_id/state", async (c) => {
    const { threadId } = requireThreadRow(c);
    const body = await readJson(c, stateUpdateSchema, max);
    if (await ctx.runs.isThreadBusy(threadId)) throw new HttpError(409, `Thread ${threadId} already has an active run`);
    const checkpointId = body.checkpoint?.checkpoint_id ?? body.checkpoint_id ?? undefined;
    if (checkpointId && !(await ctx.runtime.readState(threadId, checkpointId))) throw new HttpError(404, `Checkpoint ${checkpointId} not found`);
    let snap: StateSnapshot;
    try {
      snap = await ctx.runtime.updateState(threadId, body.values ?? {}, { checkpointId, asNode: body.as_node ?? undefined });
    } catch (err) {
      if (err instanceof InvalidUpdateError) throw new HttpError(422, err.message);
      if (err instanceof DeerFlowError && err.code === "validation_error") throw new HttpError(422, err.message);
      throw err;
    }
    const title = body.values?.title;
    const ts = new Date().toISOString();
    await ctx.stores.threads.update(threadId, typeof title === "string" ? { displayName: title, updatedAt: ts } : { updatedAt: ts });
    return c.json(stateResponse(threadId, snap));
  });

  app.post("/threads/:thread_id/history", async (c) => {
    const threadId = readableThreadId(c);
    const body = await readJson(c, historySchema, max);
    const before = typeof body.before === "string" ? body.before : body.before?.configurable?.checkpoint_id;
    const snaps = await ctx.runtime.stateHistory(threadId, { limit: body.limit ?? 10, before: before ?? undefined });
    const runIds = await ctx.stores.messages.runIds(threadId);
    const runs = new Map((await ctx.stores.runs.listByThread(threadId)).map((r) => [r.runId, r]));
    return c.json(snaps.map((s, i) => historyEntry(s, i === 0, runIds, runs)));
  });
}
