import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { validationError } from "../http-error";
import { checkThreadId, queryInt } from "../validate";
import { readableThreadId } from "./thread-access";
import { registerTokenUsageRoutes } from "./token-usage";

const KEPT_TYPES = new Set(["human", "ai", "tool"]);

const EVENT_TYPE: Record<string, string> = {
  human: "llm.human.input",
  ai: "llm.ai.response",
  tool: "llm.tool.result",
};

/** Persisted transcript (`messages/page`); token usage is in `token-usage.ts`. */
export function registerThreadDataRoutes(app: Hono, ctx: GatewayContext): void {
  registerTokenUsageRoutes(app, ctx);
  app.get("/threads/:thread_id/messages/page", async (c) => {
    checkThreadId(c.req.param("thread_id"));
    const threadId = readableThreadId(c);
    if (c.req.query("after_seq") !== undefined) {
      throw validationError([{ type: "extra_forbidden", loc: ["query", "after_seq"], msg: "after_seq is not supported on this endpoint" }]);
    }
    const limit = queryInt(c, "limit", 50, 1, 200);
    const beforeRaw = c.req.query("before_seq");
    const beforeSeq = beforeRaw === undefined || beforeRaw === "" ? undefined : queryInt(c, "before_seq", 0, 1, Number.MAX_SAFE_INTEGER);
    const { rows, hasMore } = await ctx.stores.messages.page(threadId, { limit, beforeSeq });
    const runs = new Map((await ctx.stores.runs.listByThread(threadId)).map((r) => [r.runId, r]));
    // a successful regenerate/edit rerun supersedes the run it replays: that run's rows leave the feed
    const superseded = new Set(
      [...runs.values()].filter((r) => r.status === "success" && typeof r.metadata.regenerate_from_run_id === "string").map((r) => r.metadata.regenerate_from_run_id as string),
    );
    // a regenerate replays the user message under its old id, so that row stays with the old run:
    // rows of a superseded run remain only while their message is still in the thread's state
    let live: Set<string> | undefined;
    if (rows.some((r) => superseded.has(r.runId))) {
      const head = await ctx.runtime.readState(threadId);
      live = new Set((head?.values.messages ?? []).map((m) => m.id).filter((id): id is string => !!id));
    }
    const kept = rows.filter((r) => KEPT_TYPES.has(r.messageType) && (!superseded.has(r.runId) || live?.has(String(r.content.id))));
    const lastAi = new Map<string, number>();
    kept.forEach((r, i) => {
      if (r.messageType === "ai") lastAi.set(r.runId, i);
    });
    const data = kept.map((r, i) => {
      let content = r.content;
      const run = runs.get(r.runId);
      if (lastAi.get(r.runId) === i && run && run.status !== "running" && run.status !== "pending") {
        const seconds = (Date.parse(run.updatedAt) - Date.parse(run.createdAt)) / 1000;
        content = { ...content, additional_kwargs: { ...((content.additional_kwargs as object) ?? {}), turn_duration: seconds } };
      }
      const usage = r.messageType === "ai" ? (content.usage_metadata ?? undefined) : undefined;
      return {
        thread_id: r.threadId,
        run_id: r.runId,
        seq: r.seq,
        event_type: EVENT_TYPE[r.messageType],
        category: "message",
        content,
        metadata: usage ? { caller: "lead_agent", usage } : { caller: "lead_agent" },
        created_at: r.createdAt,
        feedback: null,
      };
    });
    return c.json({ data, has_more: hasMore, next_before_seq: hasMore && rows.length ? rows[0].seq : null });
  });
}
