import { buildModelsResponse } from "@deerflow-ts/harness";
import type { Hono } from "hono";
import { z } from "zod";
import { appSettings } from "../app-settings";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { checkThreadId, readJson } from "../validate";

const suggestionsSchema = z.looseObject({
  messages: z.array(z.unknown()).optional(),
  n: z.number().int().min(0).max(20).optional(),
  model_name: z.string().nullable().optional(),
});

/** Models, features, skills, channels, suggestions (DeerFlow's gateway REST routes). */
export function registerAppInfoRoutes(app: Hono, ctx: GatewayContext): void {
  // the embedded client's listModels() builds the same body with the same function
  const listing = () => {
    const s = appSettings(ctx);
    return buildModelsResponse({ models: s.models, token_usage: { enabled: s.tokenUsageEnabled } });
  };

  app.get("/models", (c) => c.json(listing()));
  app.get("/models/:name", (c) => {
    const m = listing().models.find((x) => x.name === c.req.param("name"));
    if (!m) throw new HttpError(404, `Model '${c.req.param("name")}' not found`);
    return c.json(m);
  });
  app.get("/features", (c) =>
    c.json({
      agents_api: { enabled: appSettings(ctx).agentsApiEnabled },
      browser_control: { enabled: false },
      mcp_tasks: { enabled: false },
      // Not a DeerFlow feature flag: our demo mode (scripted model), so the UI can say how to leave it.
      demo_mode: ctx.options.demoMode ? { enabled: true, configure_command: ctx.options.demoMode.configureCommand } : { enabled: false },
    }),
  );
  app.get("/channels/providers", (c) => c.json({ providers: [] }));
  app.get("/channels/connections", (c) => c.json({ connections: [] }));
  app.get("/channels", (c) => c.json({ service_running: false, channels: {} }));
  app.get("/suggestions/config", (c) => c.json({ ...ctx.options.suggestions }));
  app.post("/threads/:thread_id/suggestions", async (c) => {
    checkThreadId(c.req.param("thread_id"));
    await readJson(c, suggestionsSchema, ctx.options.maxBodyBytes);
    return c.json({ suggestions: [] });
  });
}
