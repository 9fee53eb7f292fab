import type { Hono } from "hono";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import type { ModelInfo } from "../options";
import { checkThreadId, readJson } from "../validate";

/** Project a raw model config entry to the public listing (never secrets). */
export function publicModel(raw: Record<string, unknown>): ModelInfo {
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    name: String(raw.name ?? ""),
    model: String(raw.model ?? raw.name ?? ""),
    display_name: str(raw.display_name),
    description: str(raw.description),
    supports_thinking: raw.supports_thinking === true,
    supports_reasoning_effort: raw.supports_reasoning_effort === true,
  };
}

const suggestionsSchema = z.looseObject({
  messages: z.array(z.unknown()).optional(),
  n: z.number().int().min(0).max(20).optional(),
  model_name: z.string().nullable().optional(),
});

/** Models, features, skills, channels, suggestions (§3.4/§3.5). */
export function registerAppInfoRoutes(app: Hono, ctx: GatewayContext): void {
  const models = () => (ctx.options.models ?? []).map(publicModel);

  app.get("/models", (c) => c.json({ models: models(), token_usage: { enabled: ctx.options.tokenUsageEnabled ?? false } }));
  app.get("/models/:name", (c) => {
    const m = models().find((x) => x.name === c.req.param("name"));
    if (!m) throw new HttpError(404, `Model '${c.req.param("name")}' not found`);
    return c.json(m);
  });
  app.get("/features", (c) =>
    c.json({ agents_api: { enabled: false }, browser_control: { enabled: false }, mcp_tasks: { enabled: false } }),
  );
  app.get("/skills", (c) => c.json({ skills: [] }));
  app.get("/channels/providers", (c) => c.json({ providers: [] }));
  app.get("/channels/connections", (c) => c.json({ connections: [] }));
  app.get("/channels", (c) => c.json({ service_running: false, channels: {} }));
  app.get("/scheduled-tasks", (c) => c.json([]));
  app.get("/suggestions/config", (c) => c.json({ ...ctx.options.suggestions }));
  app.post("/threads/:thread_id/suggestions", async (c) => {
    checkThreadId(c.req.param("thread_id"));
    await readJson(c, suggestionsSchema, ctx.options.maxBodyBytes);
    return c.json({ suggestions: [] });
  });
}
