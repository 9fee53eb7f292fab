import { z } from "zod";
import { bool, int, list, mapOf, nullable, num, section } from "./schema-helpers";

/** Soft routing hints of an MCP server or tool. Priority is clamped to 0–100. */
export const mcpRoutingSchema = section({
  mode: z.enum(["off", "prefer"]).default("off"),
  priority: int()
    .default(0)
    .transform((n) => Math.min(100, Math.max(0, n))),
  keywords: list(z.string()),
});

/** One `mcpServers.<name>` entry of `extensions_config.json`. */
export const mcpServerConfigSchema = z.preprocess(
  (v) => {
    // The MCP spec spells the transport `transport`; `type` wins when both are set.
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const d = v as Record<string, unknown>;
      if (d.transport && !d.type) return { ...d, type: d.transport };
    }
    return v;
  },
  z.looseObject({
    enabled: bool().default(true),
    type: z.string().default("stdio"),
    command: nullable(z.string()),
    args: list(z.string()),
    env: mapOf(z.string()),
    url: nullable(z.string()),
    headers: mapOf(z.string()),
    oauth: nullable(z.looseObject({ token_url: z.string() })),
    description: z.string().default(""),
    routing: mcpRoutingSchema,
    tools: mapOf(z.looseObject({ routing: mcpRoutingSchema })),
    tool_call_timeout: nullable(num()),
  }),
);

/** The `extensions_config.json` document (MCP servers, skill states, middlewares). */
export const extensionsConfigSchema = z.looseObject({
  mcpServers: mapOf(mcpServerConfigSchema),
  skills: mapOf(section({ enabled: bool().default(true) })),
  middlewares: list(z.string()),
});

/** A validated extensions config. */
export type ExtensionsConfig = z.output<typeof extensionsConfigSchema>;

/** One validated MCP server entry. */
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
