import { MemoryConflictError, MemoryCorruptionError, MemoryFactError, MemoryService, SAFE_ID } from "@deerflow-ts/harness";
import type { MemoryScope } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { z } from "zod";
import { userOf } from "../auth";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";

/** Largest accepted import body. */
const MAX_IMPORT_BYTES = 16 * 1024 * 1024;

const factCreateSchema = z.object({ content: z.string().min(1), category: z.string().default("context"), confidence: z.number().min(0).max(1).default(0.5) });
const factPatchSchema = z.object({ content: z.string().min(1).nullish(), category: z.string().nullish(), confidence: z.number().min(0).max(1).nullish() });
const settingsSchema = z.object({ enabled: z.boolean() });
const recallSchema = z.object({ query: z.string().max(20000), thread_id: z.string().nullish() });
const importSchema = z.looseObject({ facts: z.array(z.looseObject({})).optional(), user: z.looseObject({}).optional(), history: z.looseObject({}).optional() });

/**
 * The gateway's memory service: the runtime's own (`attachMemory`; it also
 * feeds the agents), else — memory off, or a runtime built without it — one
 * opened on the runtime's config and data dir for the management API alone
 * (closed with the runtime).
 */
function serviceResolver(ctx: GatewayContext): () => MemoryService {
  let fallback: MemoryService | undefined;
  return () => {
    const own = ctx.runtime.extensions.memory;
    if (own) return own;
    if (!fallback) {
      const config = ctx.runtime.config();
      const svc = new MemoryService({ config: config?.memory ?? {}, dataDir: ctx.runtime.dataDir, database: config?.database, pgPool: ctx.runtime.pgPool, logger: { warn: (m) => ctx.options.log(`[memory] ${m}`) } });
      ctx.runtime.onClose(() => svc.close());
      fallback = svc;
    }
    return fallback;
  };
}

function toHttp(err: unknown): never {
  if (err instanceof MemoryFactError) {
    if (err.code === "memory_fact_not_found") throw new HttpError(404, err.message);
    if (err.code === "memory_fact_duplicate" || err.code === "memory_fact_evicted") throw new HttpError(409, err.message);
    throw new HttpError(400, err.message);
  }
  if (err instanceof MemoryConflictError) throw new HttpError(409, "Memory changed concurrently; reload and retry.");
  if (err instanceof MemoryCorruptionError) throw new HttpError(500, "Stored memory data is corrupted.");
  throw err;
}

/**
 * DeerFlow's memory API: `GET/DELETE /memory`, `POST /memory/reload`,
 * `POST /memory/facts`, `PATCH/DELETE /memory/facts/{id}`,
 * `GET /memory/export`, `POST /memory/import`, `GET /memory/config`,
 * `GET /memory/status`; plus `GET/PUT /memory/settings` (the per-user off
 * switch), `POST /memory/recall` (what would be injected for a question:
 * the `<memory>` text and its report), `GET /memory/relations` (tier 3) and
 * `GET /memory/threads` (tier 2). `?agent_name=` selects a custom agent's memory.
 */
export function registerMemoryRoutes(api: Hono, ctx: GatewayContext): void {
  const service = serviceResolver(ctx);
  const scope = (c: Context): MemoryScope => {
    const agent = c.req.query("agent_name");
    if (agent !== undefined && agent !== "" && !SAFE_ID.test(agent)) throw new HttpError(422, "Invalid agent_name");
    return { userId: userOf(c).id, agentName: agent ? agent : null };
  };
  const run = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      toHttp(err);
    }
  };
  /** `run` for operations that touch the index (a database away on PostgreSQL). */
  const runAsync = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      toHttp(err);
    }
  };

  api.get("/memory", (c) => c.json(run(() => service().getMemory(scope(c)))));
  api.post("/memory/reload", (c) => c.json(run(() => service().reloadMemory(scope(c)))));
  api.delete("/memory", async (c) => c.json(await runAsync(() => service().clearMemory(scope(c)))));
  api.post("/memory/facts", async (c) => {
    const body = await readJson(c, factCreateSchema, 64 * 1024);
    return c.json((await runAsync(() => service().createFact(scope(c), body))).memory);
  });
  api.delete("/memory/facts/:fact_id", async (c) => c.json(await runAsync(() => service().deleteFact(scope(c), c.req.param("fact_id")))));
  api.patch("/memory/facts/:fact_id", async (c) => {
    const body = await readJson(c, factPatchSchema, 64 * 1024);
    const patch = { content: body.content ?? undefined, category: body.category ?? undefined, confidence: body.confidence ?? undefined };
    return c.json(await runAsync(() => service().updateFact(scope(c), c.req.param("fact_id"), patch)));
  });
  api.get("/memory/export", (c) => c.json(run(() => service().exportMemory(scope(c)))));
  api.post("/memory/import", async (c) => {
    const body = await readJson(c, importSchema, MAX_IMPORT_BYTES);
    return c.json(await runAsync(() => service().importMemory(scope(c), body)));
  });
  api.get("/memory/config", (c) => c.json(service().configResponse()));
  api.get("/memory/status", async (c) => {
    const s = service();
    // The updater serves every user: its counters are harmless, but its last error can quote another user's conversation.
    const updater = userOf(c).systemRole === "admin" ? s.updaterStatus : { ...s.updaterStatus, lastError: null };
    return c.json({ config: s.configResponse(), data: run(() => s.getMemory(scope(c))), updater, user_enabled: await s.isUserEnabled(userOf(c).id) });
  });
  api.get("/memory/settings", async (c) => c.json({ enabled: await service().isUserEnabled(userOf(c).id) }));
  api.put("/memory/settings", async (c) => {
    const body = await readJson(c, settingsSchema, 4096);
    await service().setUserEnabled(userOf(c).id, body.enabled);
    return c.json({ enabled: await service().isUserEnabled(userOf(c).id) });
  });
  api.post("/memory/recall", async (c) => {
    const body = await readJson(c, recallSchema, 64 * 1024);
    const out = await service().recall(scope(c), body.query, { threadId: body.thread_id ?? null });
    return c.json({ text: out.text, ...out.report });
  });
  api.get("/memory/relations", async (c) => c.json({ relations: await service().relations(scope(c)) }));
  api.get("/memory/threads", async (c) => c.json({ threads: await service().threadSummaries(scope(c)) }));
}
