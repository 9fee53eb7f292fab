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

/** `mcpServers.<name>.tools.<tool>.routing`: like {@link mcpRoutingSchema}, without defaults. */
export const mcpRoutingOverrideSchema = z.looseObject({
  mode: z.enum(["off", "prefer"]).optional(),
  priority: int()
    .transform((n) => Math.min(100, Math.max(0, n)))
    .optional(),
  keywords: z.array(z.string()).optional(),
});

/** `mcpServers.<name>.oauth`: how to obtain the bearer token sent to an HTTP/SSE server. */
export const mcpOAuthConfigSchema = z.looseObject({
  enabled: bool().default(true),
  token_url: z.string(),
  grant_type: z.enum(["client_credentials", "refresh_token"]).default("client_credentials"),
  client_id: nullable(z.string()),
  client_secret: nullable(z.string()),
  refresh_token: nullable(z.string()),
  scope: nullable(z.string()),
  audience: nullable(z.string()),
  token_field: z.string().default("access_token"),
  token_type_field: z.string().default("token_type"),
  expires_in_field: z.string().default("expires_in"),
  default_token_type: z.string().default("Bearer"),
  refresh_skew_seconds: int().default(60),
  extra_token_params: mapOf(z.string()),
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
    oauth: nullable(mcpOAuthConfigSchema),
    description: z.string().default(""),
    routing: mcpRoutingSchema,
    // Per-tool overrides keep only the keys written, so unset ones fall back to the server's hint.
    tools: mapOf(z.looseObject({ routing: mcpRoutingOverrideSchema.optional() })),
    tool_name_prefix: bool().default(true),
    tool_call_timeout: nullable(num()),
    // DeerFlow bounds server bring-up at 60 s by default; an explicit null disables the bound.
    session_init_timeout: z.preprocess((v) => (v === undefined ? 60 : v), num().nullable()),
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

/** A validated `oauth` block of an MCP server. */
export type McpOAuthConfig = z.output<typeof mcpOAuthConfigSchema>;

/** One validated MCP server entry. */
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
