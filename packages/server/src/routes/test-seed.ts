import { emptyUsage, readEnv } from "@deerflow-ts/harness";
import type { Hono } from "hono";
import { z } from "zod";
import { userOf } from "../auth/request-user";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";

/** DeerFlow's switch of its test-only seeding route (its spelling, without the underscore). */
export const TEST_SEED_ENV = "DEERFLOW_ENABLE_TEST_SEED";

const seedBodySchema = z.object({
  thread_id: z.string().min(1).max(128),
  runs: z
    .array(
      z.object({
        run_id: z.string().min(1).max(128),
        created_at: z.string().refine((s) => !Number.isNaN(Date.parse(s)), "expected an ISO timestamp"),
        messages: z.array(z.object({ role: z.enum(["human", "ai"]), content: z.string(), id: z.string().min(1) })).max(1000),
      }),
    )
    .min(1)
    .max(100),
});

const isProduction = (env: Record<string, string | undefined>) => [env.DEER_FLOW_ENV, env.ENVIRONMENT].some((v) => ["prod", "production"].includes((v ?? "").trim().toLowerCase()));

/**
 * `POST /test-only/seed-runs`, mounted only when `DEERFLOW_ENABLE_TEST_SEED=1`
 * (and never in production): writes a thread with finished runs and each
 * run's transcript for the calling user, and no checkpoint, so end-to-end
 * tests can make the UI rebuild a history from the run records alone.
 */
export function registerTestSeedRoutes(app: Hono, ctx: GatewayContext, env: Record<string, string | undefined> = process.env): boolean {
  if (readEnv(TEST_SEED_ENV, env) !== "1" || isProduction(env)) return false;
  ctx.options.log(`[gateway] ${TEST_SEED_ENV}=1: the test-only route POST /api/test-only/seed-runs is mounted. Never set this on a real deployment.`);
  app.post("/test-only/seed-runs", async (c) => {
    const body = await readJson(c, seedBodySchema, ctx.options.maxBodyBytes);
    const userId = userOf(c).id;
    const existing = await ctx.stores.threads.get(body.thread_id);
    if (existing && existing.userId !== userId) throw new HttpError(409, `Thread ${body.thread_id} already exists`);
    const times = body.runs.map((r) => new Date(r.created_at).toISOString());
    const first = times.reduce((a, b) => (a < b ? a : b));
    const last = times.reduce((a, b) => (a > b ? a : b));
    if (!existing) await ctx.stores.threads.create({ threadId: body.thread_id, userId, status: "idle", metadata: {}, displayName: null, createdAt: first, updatedAt: last });
    for (const [i, run] of body.runs.entries()) {
      const at = times[i];
      await ctx.stores.runs.create({
        runId: run.run_id,
        threadId: body.thread_id,
        userId,
        assistantId: "lead_agent",
        status: "success",
        metadata: {},
        kwargs: {},
        multitaskStrategy: "reject",
        createdAt: at,
        updatedAt: at,
        usage: { ...emptyUsage(), messageCount: run.messages.length },
        stopReason: null,
        error: null,
        modelName: null,
      });
      await ctx.stores.messages.record(body.thread_id, run.run_id, run.messages.map((m) => ({ type: m.role, content: m.content, id: m.id })), at);
    }
    return c.json({ ok: true, thread_id: body.thread_id, runs: body.runs.length });
  });
  return true;
}
