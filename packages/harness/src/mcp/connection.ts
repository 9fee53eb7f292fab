import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { errorMessage } from "../errors";
import { envReferenceName } from "../config";
import type { McpServerConfig } from "../config";
import { McpError } from "./errors";
import type { StdioLaunch } from "./launch-plan";
import type { McpPathScope } from "./path-mapping";
import { loadMcpSdk } from "./sdk";
import type { McpSdk } from "./sdk";
import { LaunchedStdioTransport } from "./stdio-transport";
import { oauthFetch } from "./oauth";
import type { OAuthTokenManager } from "./oauth";
import type { McpCallResult } from "./result-convert";

/** One tool as a server lists it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: unknown;
  title?: string;
}

/** Where and how to start one connection. */
export interface McpConnectOptions {
  /** stdio: the planned process (see `planStdioLaunch`): argv, complete env, cwd, sandbox. */
  stdio?: StdioLaunch;
  /** sse/http: bearer tokens for every request. */
  oauth?: OAuthTokenManager;
  /** Bound on start + `initialize` (ms); undefined = no bound. */
  initTimeoutMs?: number;
  /** Client name announced to the server. */
  clientName?: string;
}

/** Bytes of a stdio server's stderr kept to explain a failure. */
const STDERR_TAIL = 2000;

/** The transport kind of a server entry (`http` also accepts `streamable_http`/`streamable-http`). */
export function transportKind(server: McpServerConfig): "stdio" | "sse" | "http" | undefined {
  const t = (server.type || "stdio").toLowerCase().replace("-", "_");
  if (t === "stdio") return "stdio";
  if (t === "sse") return "sse";
  if (t === "http" || t === "streamable_http") return "http";
  return undefined;
}

/** Resolve `$VAR`/`${VAR}` values still present (in-memory configs skip the loader); unset → "". */
export function resolveEnvRefs(values: Record<string, string>, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    const name = envReferenceName(v);
    out[k] = name ? (env[name] ?? "") : v;
  }
  return out;
}

/**
 * One live MCP client session (official SDK `Client`) over stdio, SSE or
 * streamable HTTP. `closed` turns true when the transport ends (process
 * exit, stream closed) so pools can replace it.
 */
export class McpConnection {
  closed = false;
  private stderrTail = "";

  private constructor(
    readonly server: string,
    private readonly sdk: McpSdk,
    private readonly client: Client,
    private readonly transport: Transport,
    /** stdio: the launch this session runs (argument mapping, result path scope). */
    readonly launch?: StdioLaunch,
  ) {}

  /** How local paths in this session's results map to the thread's virtual paths (stdio thread sessions). */
  get pathScope(): McpPathScope | undefined {
    return this.launch?.pathScope;
  }

  /** Start the transport and run `initialize`, bounded by `initTimeoutMs` (a hung server is killed). */
  static async open(name: string, config: McpServerConfig, options: McpConnectOptions = {}): Promise<McpConnection> {
    const kind = transportKind(config);
    if (!kind) throw new McpError(name, `MCP server '${name}' has unsupported transport type: ${config.type}`, { code: "mcp_config_invalid" });
    const sdk = await loadMcpSdk();
    let transport: Transport;
    let stdio: LaunchedStdioTransport | undefined;
    if (kind === "stdio") {
      if (!config.command) throw new McpError(name, `MCP server '${name}' with stdio transport requires 'command'`, { code: "mcp_config_invalid" });
      if (!options.stdio) throw new McpError(name, `MCP server '${name}': a stdio session needs a launch plan`, { code: "mcp_config_invalid" });
      stdio = new LaunchedStdioTransport(options.stdio);
      transport = stdio;
    } else {
      if (!config.url) throw new McpError(name, `MCP server '${name}' with ${kind} transport requires 'url'`, { code: "mcp_config_invalid" });
      let url: URL;
      try {
        url = new URL(config.url);
      } catch {
        throw new McpError(name, `MCP server '${name}' has an invalid url`, { code: "mcp_config_invalid" });
      }
      const headers = resolveEnvRefs(config.headers, process.env);
      const opts = { requestInit: { headers }, ...(options.oauth ? { fetch: oauthFetch(options.oauth) } : {}) };
      transport = kind === "sse" ? new sdk.SSEClientTransport(url, opts) : new sdk.StreamableHTTPClientTransport(url, opts);
    }
    const client = new sdk.Client({ name: options.clientName ?? "deerflow", version: "2.0.0" }, { capabilities: {} });
    const conn = new McpConnection(name, sdk, client, transport, options.stdio);
    stdio?.stderr.on("data", (chunk: Buffer) => {
      conn.stderrTail = (conn.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    client.onclose = () => {
      conn.closed = true;
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      const connecting = client.connect(transport, options.initTimeoutMs ? { timeout: options.initTimeoutMs } : undefined);
      if (options.initTimeoutMs) {
        const ms = options.initTimeoutMs;
        await Promise.race([
          connecting,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new McpError(name, `MCP server '${name}' did not initialise within ${ms / 1000}s`, { code: "mcp_init_timeout" })), ms);
          }),
        ]);
      } else await connecting;
    } catch (err) {
      conn.closed = true;
      // A server that failed or hung at start-up gets no graceful shutdown window: it is terminated now.
      const pid = stdio?.pid;
      if (pid) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      void client.close().catch(() => undefined);
      if (err instanceof McpError) throw err;
      const tail = conn.stderrTail.trim();
      throw new McpError(name, `MCP server '${name}' failed to start: ${describe(err)}${tail ? ` (stderr: ${tail.slice(-300)})` : ""}`, {
        code: "mcp_start_failed",
        cause: err,
      });
    } finally {
      if (timer) clearTimeout(timer);
    }
    return conn;
  }

  /** Every tool of the server (follows `nextCursor`). */
  async listTools(timeoutMs?: number): Promise<McpToolInfo[]> {
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : undefined, timeoutMs ? { timeout: timeoutMs } : undefined);
      for (const t of page.tools) out.push({ name: t.name, description: t.description, inputSchema: t.inputSchema, title: t.title });
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  /** Call a tool; timeouts and a dropped connection become {@link McpError}s. */
  async callTool(tool: string, args: Record<string, unknown>, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<McpCallResult> {
    if (this.closed) throw new McpError(this.server, `MCP server '${this.server}' is not connected`, { code: "mcp_connection_closed" });
    // A run's signal is shared by all its tool calls; the SDK listens on the signal it is given, so each call
    // gets its own child signal and the link to the run's is removed when the call ends.
    const child = new AbortController();
    const forward = () => child.abort(options.signal?.reason);
    if (options.signal?.aborted) forward();
    else options.signal?.addEventListener("abort", forward, { once: true });
    try {
      const res = await this.client.callTool({ name: tool, arguments: this.launch ? this.launch.mapArgs(args) : args }, undefined, {
        ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        signal: child.signal,
      });
      return res as McpCallResult;
    } catch (err) {
      const { McpError: SdkMcpError, ErrorCode } = this.sdk;
      if (err instanceof SdkMcpError && err.code === ErrorCode.RequestTimeout) {
        throw new McpError(this.server, `MCP tool '${tool}' on server '${this.server}' timed out after ${(options.timeoutMs ?? 60_000) / 1000}s`, { code: "mcp_call_timeout", cause: err });
      }
      if (this.closed || (err instanceof SdkMcpError && err.code === ErrorCode.ConnectionClosed)) {
        this.closed = true;
        const tail = this.stderrTail.trim();
        throw new McpError(this.server, `MCP server '${this.server}' closed the connection during '${tool}'${tail ? ` (stderr: ${tail.slice(-300)})` : ""}`, {
          code: "mcp_connection_closed",
          cause: err,
        });
      }
      throw new McpError(this.server, `MCP tool '${tool}' on server '${this.server}' failed: ${describe(err)}`, { cause: err });
    } finally {
      options.signal?.removeEventListener("abort", forward);
    }
  }

  /** Close the session (stdio: end stdin, then SIGTERM/SIGKILL). */
  async close(): Promise<void> {
    this.closed = true;
    await this.client.close().catch(() => undefined);
  }
}

function describe(err: unknown): string {
  return errorMessage(err).replace(/^MCP error -?\d+: /, "");
}
