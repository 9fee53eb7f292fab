import type { Hono } from "hono";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";

const STARTED = new Date(0).toISOString();

function leadAgent(): Record<string, unknown> {
  return {
    assistant_id: "lead_agent",
    graph_id: "lead_agent",
    name: "lead_agent",
    config: {},
    context: {},
    metadata: { created_by: "system" },
    description: "DeerFlow lead agent",
    created_at: STARTED,
    updated_at: STARTED,
    version: 1,
  };
}

const searchSchema = z.looseObject({ graph_id: z.string().optional(), name: z.string().optional(), limit: z.number().int().min(1).max(1000).optional(), offset: z.number().int().min(0).optional() });

/** Assistants stubs for SDK completeness (the LangGraph SDK's `/assistants` calls). */
export function registerAssistantRoutes(app: Hono, ctx: GatewayContext): void {
  app.post("/assistants/search", async (c) => {
    const body = await readJson(c, searchSchema, ctx.options.maxBodyBytes);
    const all = [leadAgent()].filter((a) => (!body.graph_id || a.graph_id === body.graph_id) && (!body.name || a.name === body.name));
    const offset = body.offset ?? 0;
    return c.json(all.slice(offset, offset + (body.limit ?? 10)));
  });
  const one = (id: string) => {
    if (id !== "lead_agent") throw new HttpError(404, `Assistant ${id} not found`);
    return leadAgent();
  };
  app.get("/assistants/:id", (c) => c.json(one(c.req.param("id"))));
  app.get("/assistants/:id/graph", (c) => {
    one(c.req.param("id"));
    return c.json({ graph_id: "lead_agent", nodes: [], edges: [] });
  });
  app.get("/assistants/:id/schemas", (c) => {
    one(c.req.param("id"));
    return c.json({ graph_id: "lead_agent", input_schema: {}, output_schema: {}, state_schema: {}, config_schema: {}, context_schema: {} });
  });
}
