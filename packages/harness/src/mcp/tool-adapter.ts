import { z } from "zod";
import type { McpRoutingConfig } from "./routing";
import type { ToolDefinition, ToolResult, ToolRuntime } from "../tools";
import type { McpToolInfo } from "./connection";
import { sanitizeToolSchema } from "./schema-sanitize";

/** Tool names a provider accepts as a function name (and that cannot forge prompt structure when listed). */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `metadata` of every MCP tool: how deferral, routing and the UI recognise it. */
export interface McpToolMetadata {
  group: "mcp";
  mcp: true;
  mcp_server: string;
  /** The name the server knows the tool by. */
  mcp_tool: string;
  /** Effective routing hint (server-level, overridden per tool), when not `off`. */
  routing?: McpRoutingConfig;
}

/** True for tools built from an MCP server (the deferred-tool candidates). */
export function isMcpTool(def: ToolDefinition): boolean {
  return def.metadata?.mcp === true;
}

/** The exposed name of an MCP tool: `{server}_{tool}` unless the server opts out of prefixing. */
export function mcpToolName(server: string, tool: string, prefix: boolean): string {
  return prefix ? `${server}_${tool}` : tool;
}

/** Arguments are validated by the server against its own schema; the harness only requires an object. */
const ARGS = z.record(z.string(), z.unknown());

/**
 * Wrap one MCP tool as a {@link ToolDefinition}. The JSON schema the model
 * sees is the server's, sanitised for providers ({@link sanitizeToolSchema});
 * `call` routes the invocation to the right session at call time.
 */
export function createMcpToolDefinition(options: {
  server: string;
  info: McpToolInfo;
  name: string;
  routing?: McpRoutingConfig;
  call(args: Record<string, unknown>, runtime: ToolRuntime): Promise<ToolResult>;
}): ToolDefinition<Record<string, unknown>> {
  const metadata: McpToolMetadata = {
    group: "mcp",
    mcp: true,
    mcp_server: options.server,
    mcp_tool: options.info.name,
    ...(options.routing && options.routing.mode !== "off" ? { routing: options.routing } : {}),
  };
  const description = options.info.description?.trim() || options.info.title?.trim() || `MCP tool '${options.info.name}' of server '${options.server}'.`;
  return {
    name: options.name,
    description,
    schema: ARGS,
    parameters: sanitizeToolSchema(options.info.inputSchema),
    metadata: metadata as unknown as Record<string, unknown>,
    execute: (args, runtime) => options.call(args, runtime),
  };
}
