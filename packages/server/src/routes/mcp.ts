import {
  errorMessage,
  guardApiSubmittedEntry,
  mcpConfigPath,
  mcpConfigResponse,
  readRawExtensionsConfig,
  setMcpServerEnabled,
  validateStdioLaunch,
  ValidationError,
  writeMcpServers,
} from "@deerflow-ts/harness";
import type { McpEntryValidator, McpServerStatus, StdioLaunchSpec } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { requireAdmin } from "../auth";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";

/** The 403 text of the admin-only MCP routes (DeerFlow's). */
export const MCP_ADMIN_REQUIRED = "Admin privileges required to manage MCP configuration.";

/** What the MCP routes need from the running gateway. */
export interface McpRouteOptions {
  /** extensions_config.json to read and write (evaluated per request, so a moved file is followed). */
  configPath: () => string;
  /** The runtime's MCP pool, when there is one: per-server status and the cache reset after a write. */
  pool?: () => McpStatusSource | undefined;
  /** Called after every write (the gateway drops its cached agents). */
  invalidate?: () => void;
  /** `mcp_api.allowed_env_vars` of config.yaml: the variables a submitted `$VAR` may name (read per request). */
  allowedEnvVars?: () => readonly string[];
  /** The runtime's data dir: submitted commands/args naming a path inside it are refused. */
  dataDir?: string;
  /** Max JSON body size (default 1 MiB). */
  maxBodyBytes?: number;
  log?: (message: string) => void;
}

/** The slice of `McpPool` the routes use. */
export interface McpStatusSource {
  status(): McpServerStatus[];
  ready(): Promise<void>;
  reset(): void;
}

const updateSchema = z.object({ mcp_servers: z.record(z.string().min(1), z.looseObject({})) });
const stateSchema = z.object({ server_name: z.string().min(1), enabled: z.boolean() });

/** Longest `GET /api/mcp/status?wait=true` waits for servers still loading. */
const STATUS_WAIT_MS = 10_000;

/** Register the MCP routes for the gateway's runtime (its extensions_config.json and MCP pool). */
export function registerMcpRoutes(app: Hono, ctx: GatewayContext): void {
  registerMcpRoutesWith(app, {
    configPath: () => ctx.runtime.extensions.mcp?.configFile() ?? mcpConfigPath(ctx.runtime),
    pool: () => ctx.runtime.extensions.mcp,
    invalidate: () => ctx.runtime.invalidateAgents(),
    allowedEnvVars: () => {
      try {
        return ctx.runtime.config()?.mcp_api?.allowed_env_vars ?? [];
      } catch {
        return [];
      }
    },
    dataDir: ctx.runtime.dataDir,
    maxBodyBytes: ctx.options.maxBodyBytes,
    log: ctx.options.log,
  });
}

/**
 * DeerFlow's MCP router: `GET/PUT/PATCH /mcp/config` (masked secrets, atomic
 * writes of extensions_config.json, stdio launch validation and the API
 * guard — no `$VAR` outside `mcp_api.allowed_env_vars`, no `sandbox: false`,
 * no stored secret moved to a new destination — on everything submitted), `POST /mcp/cache/reset`, plus `GET /mcp/status` (per-server
 * connected/tools/last error from the pool). Writes are serialised in-process
 * and reset the pool, so the next run loads the new servers. Everything but
 * the status is admin-only (403 for a user).
 */
export function registerMcpRoutesWith(app: Hono, options: McpRouteOptions): void {
  const maxBytes = options.maxBodyBytes ?? 1024 * 1024;
  let writing: Promise<unknown> = Promise.resolve();
  const serialised = <T>(fn: () => T): Promise<T> => {
    const next = writing.then(fn, fn);
    writing = next.catch(() => undefined);
    return next;
  };
  // Entries reach this point normalised by the server-config schema, so the launch fields have their types.
  const validate: McpEntryValidator = (name, entry, context) => {
    validateStdioLaunch(name, entry as StdioLaunchSpec);
    guardApiSubmittedEntry(name, entry, context, options.allowedEnvVars?.() ?? [], options.dataDir);
  };
  const afterWrite = (raw: Record<string, unknown>) => {
    options.pool?.()?.reset();
    options.invalidate?.();
    options.log?.(`[gateway] MCP configuration saved to ${options.configPath()}`);
    return mcpConfigResponse(raw);
  };
  const guarded = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (err instanceof ValidationError) throw new HttpError(err.code === "mcp_server_not_found" ? 404 : 400, err.message);
      if (err instanceof SyntaxError) throw new HttpError(500, `extensions_config.json is not valid JSON: ${err.message}`);
      throw new HttpError(500, `Failed to update MCP configuration: ${errorMessage(err)}`);
    }
  };

  // The configuration is shared by every user (and names commands, URLs and headers): admins only, as in DeerFlow.
  const admin = (c: Context) => requireAdmin(c, MCP_ADMIN_REQUIRED);

  app.get("/mcp/config", async (c) => {
    admin(c);
    return c.json(await guarded(() => mcpConfigResponse(readRawExtensionsConfig(options.configPath()))));
  });

  app.put("/mcp/config", async (c) => {
    admin(c);
    const body = await readJson(c, updateSchema, maxBytes);
    const servers = body.mcp_servers as Record<string, Record<string, unknown>>;
    return c.json(await guarded(() => serialised(() => afterWrite(writeMcpServers(options.configPath(), servers, validate)))));
  });

  app.patch("/mcp/config", async (c) => {
    admin(c);
    const body = await readJson(c, stateSchema, maxBytes);
    return c.json(await guarded(() => serialised(() => afterWrite(setMcpServerEnabled(options.configPath(), body.server_name, body.enabled, validate)))));
  });

  app.post("/mcp/cache/reset", (c) => {
    admin(c);
    options.pool?.()?.reset();
    return c.json({ success: true, message: "MCP tools cache reset. Tools will reload on next use." });
  });

  app.get("/mcp/status", async (c) => {
    const pool = options.pool?.();
    if (!pool) return c.json({ servers: [] });
    if (c.req.query("wait") === "true") {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pool.ready(), new Promise<void>((r) => (timer = setTimeout(r, STATUS_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return c.json({ servers: pool.status() });
  });
}
