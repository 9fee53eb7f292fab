import { ToolError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";

/**
 * An MCP server could not be reached, started, initialised or called.
 * Codes: `mcp_config_invalid`, `mcp_start_failed`, `mcp_init_timeout`,
 * `mcp_connection_closed`, `mcp_call_timeout`, `mcp_call_failed`,
 * `mcp_oauth_failed`.
 */
export class McpError extends ToolError {
  /** The server the error is about. */
  readonly server: string;

  constructor(server: string, message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(message, { ...options, code: options.code ?? "mcp_call_failed", details: { server, ...(options.details ?? {}) } });
    this.server = server;
  }
}
