import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { errorMessage } from "../errors";
import type { ConfigEnv, ConfigLogger, ExtensionsConfig, McpServerConfig } from "../config";
import { DEFAULT_USER_ID } from "../sandbox";
import type { ThreadDirs } from "../sandbox";
import type { ToolDefinition, ToolResult, ToolRuntime } from "../tools";
import { ConfigSignatureReader } from "./config-source";
import type { McpConfigSource } from "./config-source";
import { McpConnection, resolveEnvRefs, transportKind } from "./connection";
import type { McpToolInfo } from "./connection";
import { McpError } from "./errors";
import { planStdioLaunch } from "./launch-plan";
import type { LaunchScope, McpLaunchSettings } from "./launch-plan";
import { OAuthTokenManager } from "./oauth";
import { convertCallToolResult } from "./result-convert";
import { effectiveRouting } from "./routing";
import { SessionLru } from "./session-lru";
import { createMcpToolDefinition, MCP_TOOL_NAME, mcpToolName } from "./tool-adapter";

/** Options of {@link McpPool}. */
export interface McpPoolOptions {
  /** Where `mcpServers` come from; called on every {@link McpPool.getTools} to notice changes. */
  extensionsConfig: () => McpConfigSource;
  /** Host directories of a thread (a stdio session sees its user-data). */
  threadDirs: (userId: string, threadId: string) => ThreadDirs;
  /**
   * How stdio servers start: launch directories under `launch.dataDir`, the
   * sandbox mode, uid and what the agent can write (see `planStdioLaunch`).
   * Default: a private temp dir as the data dir, sandbox `auto`.
   */
  launch?: McpLaunchSettings;
  logger?: ConfigLogger;
  /** Bound on pooled stdio sessions across all threads (default 256, DeerFlow's MAX_SESSIONS). */
  maxSessions?: number;
  /** First retry delay after a server failed (default 1000 ms); doubles per failure. */
  retryInitialMs?: number;
  /** Longest retry delay (default 60000 ms). */
  retryMaxMs?: number;
  /** Environment `$VAR`s in extensions_config.json resolve from (default `process.env`). */
  env?: ConfigEnv;
  /** Clock (tests). */
  now?: () => number;
  /**
   * Called when the tool set changed outside a `getTools` call: a server
   * recovered in the background or was withdrawn after failing at call time
   * (the runtime drops its cached agents so the next run sees it).
   */
  onToolsChanged?: () => void;
  /** The extensions_config.json the config API reads and writes for this pool (see {@link McpPool.configFile}). */
  configPath?: () => string;
}

/** What `status()` reports per configured server (the gateway's per-server status). */
export interface McpServerStatus {
  name: string;
  enabled: boolean;
  type: string;
  description: string;
  state: "disabled" | "connecting" | "connected" | "failed";
  connected: boolean;
  /** Exposed tool names (empty unless connected). */
  tools: string[];
  last_error: string | null;
  failures: number;
  next_retry_at: string | null;
  /** Live pooled stdio sessions of this server. */
  sessions: number;
}

/** A server of the current config that is enabled but not up (see {@link McpPool.failedServers}). */
export interface McpServerFailure {
  name: string;
  type: string;
  /** The last error, as reported once to the logger. */
  error: string;
  /** Its {@link McpError} code (`mcp_start_failed`, `mcp_init_timeout`…), null for other errors. */
  code: string | null;
  /** The server's entry (for the fix: its command or url). */
  config: McpServerConfig;
}

/** The identity a call runs as when the run context does not name one. */
export interface McpScope {
  userId?: string;
  threadId?: string;
}

interface ServerState {
  name: string;
  config: McpServerConfig;
  kind: "stdio" | "sse" | "http" | undefined;
  state: McpServerStatus["state"];
  tools: ToolDefinition[];
  lastError: string | null;
  lastErrorCode: string | null;
  failures: number;
  nextRetryAt: number | null;
  loading: Promise<void> | null;
  timer: NodeJS.Timeout | null;
  /**
   * sse/http: one connection per user (no local process, no thread data). A remote server can keep state
   * per MCP session (a browser's pages, a scratchpad), so one user's session is never another's; a user's
   * threads share theirs. The tool-discovery connection is kept as the auth-disabled user's.
   */
  remote: Map<string, Promise<McpConnection>>;
  oauth?: OAuthTokenManager;
}

interface Generation {
  signature: string;
  servers: Map<string, ServerState>;
  loaded: Promise<void>;
  closed: boolean;
}

const NO_TIMEOUT_MS = 2_147_483_647;
const secondsToMs = (s: number | null | undefined) => (s == null || s <= 0 ? undefined : Math.round(s * 1000));

/**
 * The MCP client pool: loads every enabled server of extensions_config.json
 * in parallel (each bounded by its `session_init_timeout`), exposes their
 * tools as `{server}_{tool}`, pools stdio sessions per `(server, user:thread)`
 * (each started by `planStdioLaunch`: its own launch directory, a clean
 * environment, its own bubblewrap sandbox seeing only that thread's
 * user-data), and shares one session per
 * SSE/HTTP server. A server that fails to start, crashes or hangs only loses
 * its own tools: the failure is reported once, retried with exponential
 * backoff, and its tools come back when it recovers. A changed config file
 * (path, mtime, size, sha256) replaces everything on the next call.
 */
export class McpPool {
  private generation: Generation | null = null;
  private readonly reader: ConfigSignatureReader;
  private readonly sessions: SessionLru;
  private readonly pendingCloses = new Set<Promise<void>>();
  private configError: string | null = null;
  private closed = false;
  private readonly now: () => number;
  private launchSettings?: McpLaunchSettings;

  constructor(private readonly options: McpPoolOptions) {
    this.reader = new ConfigSignatureReader(options.env);
    this.sessions = new SessionLru(options.maxSessions ?? 256, (conn) => this.track(conn.close()));
    this.now = options.now ?? Date.now;
  }

  /**
   * The tools of every server that is up. Waits for the first load of the
   * current config (each server bounded by its own timeout); later retries
   * of failed servers run in the background and never delay this call.
   * `scope` names the user/thread for calls whose run context lacks them.
   */
  async getTools(scope: McpScope = {}): Promise<ToolDefinition[]> {
    const gen = this.current();
    if (!gen) return [];
    await gen.loaded;
    const out: ToolDefinition[] = [];
    for (const s of gen.servers.values()) if (s.state === "connected") out.push(...s.tools.map((t) => this.scoped(t, scope)));
    return out;
  }

  /** Wait until no server of the current config is loading (first load and retries in flight). */
  async ready(): Promise<void> {
    const gen = this.current();
    if (!gen) return;
    await gen.loaded;
    await Promise.all([...gen.servers.values()].map((s) => s.loading));
  }

  /** Per-server status of the current config (starts loading it when needed; does not wait). */
  status(): McpServerStatus[] {
    const gen = this.current();
    if (!gen) return [];
    return [...gen.servers.values()].map((s) => ({
      name: s.name,
      enabled: s.config.enabled,
      type: s.kind ?? s.config.type,
      description: s.config.description,
      state: s.state,
      connected: s.state === "connected",
      tools: s.state === "connected" ? s.tools.map((t) => t.name) : [],
      last_error: s.lastError,
      failures: s.failures,
      next_retry_at: s.nextRetryAt ? new Date(s.nextRetryAt).toISOString() : null,
      sessions: this.sessions.count(s.name),
    }));
  }

  /**
   * The enabled servers of the loaded config that are down, with their last
   * error. Only looks: it never starts loading a config (a command that
   * failed before building an agent exits without starting servers).
   */
  failedServers(): McpServerFailure[] {
    const gen = this.generation;
    if (!gen || gen.closed) return [];
    return [...gen.servers.values()]
      .filter((s) => s.state === "failed")
      .map((s) => ({ name: s.name, type: s.kind ?? s.config.type, error: s.lastError ?? "unknown error", code: s.lastErrorCode, config: s.config }));
  }

  /** The extensions_config.json the gateway's MCP config API edits for this pool, when the host named one. */
  configFile(): string | null {
    return this.options.configPath?.() ?? null;
  }

  /** The error of the last config read that failed (the previous config stays in use), or null. */
  lastConfigError(): string | null {
    return this.configError;
  }

  /** Drop the cached tools and sessions; the next call reloads every server (the gateway's cache reset). */
  reset(): void {
    if (this.generation) this.retire(this.generation);
    this.generation = null;
  }

  /** Close the stdio sessions of one thread (on thread delete). Without `userId`, of every user. */
  async closeThread(threadId: string, userId?: string): Promise<void> {
    await this.sessions.closeScope(threadId, userId);
  }

  /** Close every session and stop retrying. The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.generation) this.retire(this.generation);
    this.generation = null;
    this.track(this.sessions.closeAll());
    while (this.pendingCloses.size) await Promise.all([...this.pendingCloses]);
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch(() => undefined).finally(() => this.pendingCloses.delete(tracked));
    this.pendingCloses.add(tracked);
  }

  /** The generation for the config as it is now: a new one when the signature changed. */
  private current(): Generation | null {
    if (this.closed) return null;
    let loaded;
    try {
      loaded = this.reader.load(this.options.extensionsConfig());
    } catch (err) {
      const msg = errorMessage(err);
      if (msg !== this.configError) this.options.logger?.warn(`MCP: cannot read extensions config, keeping the previous servers: ${msg}`);
      this.configError = msg;
      return this.generation;
    }
    this.configError = null;
    if (this.generation && this.generation.signature === loaded.signature) return this.generation;
    for (const w of loaded.warnings) this.options.logger?.warn(w);
    if (this.generation) {
      this.options.logger?.info?.("MCP: extensions config changed; reloading MCP servers");
      this.retire(this.generation);
    }
    this.generation = this.startGeneration(loaded.signature, loaded.config);
    return this.generation;
  }

  private startGeneration(signature: string, config: ExtensionsConfig): Generation {
    const servers = new Map<string, ServerState>();
    for (const [name, sc] of Object.entries(config.mcpServers)) {
      const oauth = sc.oauth && sc.oauth.enabled ? new OAuthTokenManager(name, sc.oauth, this.now) : undefined;
      servers.set(name, {
        name,
        config: sc,
        kind: transportKind(sc),
        state: sc.enabled ? "connecting" : "disabled",
        tools: [],
        lastError: null,
        lastErrorCode: null,
        failures: 0,
        nextRetryAt: null,
        loading: null,
        timer: null,
        remote: new Map(),
        ...(oauth ? { oauth } : {}),
      });
    }
    const gen: Generation = { signature, servers, loaded: Promise.resolve(), closed: false };
    const enabled = [...servers.values()].filter((s) => s.config.enabled);
    if (enabled.length) this.options.logger?.info?.(`MCP: loading ${enabled.length} server(s) in parallel`);
    gen.loaded = Promise.all(enabled.map((s) => this.load(gen, s))).then(() => undefined);
    return gen;
  }

  private retire(gen: Generation): void {
    gen.closed = true;
    for (const s of gen.servers.values()) {
      if (s.timer) clearTimeout(s.timer);
      this.closeRemote(s);
    }
    this.track(this.sessions.closeAll());
  }

  /** Discover one server's tools; never throws (a failure is recorded and retried). */
  private load(gen: Generation, s: ServerState): Promise<void> {
    s.state = "connecting";
    const run = async () => {
      let conn: McpConnection | null = null;
      try {
        const initMs = secondsToMs(s.config.session_init_timeout);
        const stdio = s.kind === "stdio" ? await this.plan(s, {}) : undefined;
        conn = await McpConnection.open(s.name, s.config, { stdio, oauth: s.oauth, initTimeoutMs: initMs });
        const infos = await conn.listTools(initMs);
        if (gen.closed) {
          this.track(conn.close());
          return;
        }
        s.tools = this.buildTools(s, infos);
        if (s.kind === "stdio") this.track(conn.close());
        else s.remote.set(DEFAULT_USER_ID, Promise.resolve(conn));
        conn = null;
        const recovered = s.failures > 0;
        if (recovered) this.options.logger?.info?.(`MCP: server '${s.name}' recovered with ${s.tools.length} tool(s)`);
        s.state = "connected";
        s.failures = 0;
        s.lastError = null;
        s.lastErrorCode = null;
        s.nextRetryAt = null;
        if (recovered) this.options.onToolsChanged?.();
      } catch (err) {
        if (conn) this.track(conn.close());
        this.fail(gen, s, err);
      }
    };
    s.loading = run().finally(() => {
      s.loading = null;
    });
    return s.loading;
  }

  /** Close every user's connection to a remote server. */
  private closeRemote(s: ServerState): void {
    for (const c of s.remote.values()) this.track(c.then((conn) => conn.close(), () => undefined));
    s.remote.clear();
  }

  /** Record a failure: reported once per failure streak, tools withdrawn, retry scheduled with backoff. */
  private fail(gen: Generation, s: ServerState, err: unknown): void {
    const msg = errorMessage(err);
    const withdrawn = s.state === "connected";
    if (s.failures === 0) this.options.logger?.warn(`MCP: server '${s.name}' is unavailable, its tools are skipped until it recovers: ${msg}`);
    s.failures++;
    s.state = "failed";
    s.lastError = msg;
    s.lastErrorCode = err instanceof McpError ? (err.code ?? null) : null;
    s.tools = [];
    this.closeRemote(s);
    if (withdrawn) this.options.onToolsChanged?.();
    // An invalid entry cannot start until the config changes (which reloads everything): no retry.
    const invalid = err instanceof McpError && err.code === "mcp_config_invalid";
    if (gen.closed || this.closed || invalid) {
      s.nextRetryAt = null;
      return;
    }
    const initial = this.options.retryInitialMs ?? 1000;
    const delay = Math.min(initial * 2 ** (s.failures - 1), this.options.retryMaxMs ?? 60_000);
    s.nextRetryAt = this.now() + delay;
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      s.timer = null;
      if (!gen.closed && !s.loading) void this.load(gen, s);
    }, delay);
    s.timer.unref();
  }

  private buildTools(s: ServerState, infos: McpToolInfo[]): ToolDefinition[] {
    const out: ToolDefinition[] = [];
    for (const info of infos) {
      const name = mcpToolName(s.name, info.name, s.config.tool_name_prefix);
      if (!MCP_TOOL_NAME.test(name)) {
        // A name outside the provider charset cannot be bound, and listed as a deferred tool it could forge prompt structure.
        this.options.logger?.warn(`MCP: dropping tool ${JSON.stringify(info.name)} of server '${s.name}': names must match ${MCP_TOOL_NAME.source}`);
        continue;
      }
      out.push(
        createMcpToolDefinition({
          server: s.name,
          info,
          name,
          routing: effectiveRouting(s.config, info.name),
          call: (args, runtime) => this.call(s.name, info.name, args, runtime, {}),
        }),
      );
    }
    return out;
  }

  /** A copy of a tool whose calls fall back to `scope` for the user/thread. */
  private scoped(def: ToolDefinition, scope: McpScope): ToolDefinition {
    if (!scope.userId && !scope.threadId) return def;
    const meta = def.metadata as { mcp_server: string; mcp_tool: string };
    return { ...def, execute: (args: Record<string, unknown>, runtime: ToolRuntime) => this.call(meta.mcp_server, meta.mcp_tool, args, runtime, scope) };
  }

  /** Route one call to the server's session in the current config; failures become error tool results. */
  private async call(server: string, tool: string, args: Record<string, unknown>, runtime: ToolRuntime, scope: McpScope): Promise<ToolResult> {
    const gen = this.current();
    const s = gen?.servers.get(server);
    // A config reload between building the agent and this call: wait for the server's fresh load.
    if (s?.state === "connecting" && s.loading) await s.loading;
    if (!gen || !s || s.state !== "connected") {
      const why = s?.lastError ? `: ${s.lastError}` : "";
      return { content: `Error: MCP server '${server}' is not available right now${why}. Try again later or use another tool.`, status: "error" };
    }
    const { userId, threadId } = runtime.context.identity;
    const timeoutMs = secondsToMs(s.config.tool_call_timeout) ?? NO_TIMEOUT_MS;
    let conn: McpConnection | undefined;
    try {
      if (s.kind === "stdio") {
        const dirs = this.options.threadDirs(userId, threadId);
        conn = await this.sessions.get(server, userId, threadId, () => this.openSession(s, dirs));
      } else {
        // (concurrent first calls of one user share one opening, so no connection is opened twice and lost)
        let opening = s.remote.get(userId);
        if (!opening || (await opening.then((c) => c.closed, () => true))) {
          // another call may have replaced it meanwhile: use that one, else open a fresh one
          const now = s.remote.get(userId);
          if (now && now !== opening) opening = now;
          else {
            const fresh = McpConnection.open(s.name, s.config, { oauth: s.oauth, initTimeoutMs: secondsToMs(s.config.session_init_timeout) });
            fresh.catch(() => {
              if (s.remote.get(userId) === fresh) s.remote.delete(userId);
            });
            s.remote.set(userId, fresh);
            opening = fresh;
          }
        }
        conn = await opening;
      }
    } catch (err) {
      // A stdio session is one user's thread: its failure (whose stderr can quote that thread's files) is
      // answered to that call only, never made the server's status, which every user reads and every
      // later call quotes; other threads' sessions start on their own. A remote server that cannot be
      // connected to cannot be reached by anyone: withdraw its tools and retry.
      if (s.kind !== "stdio" && err instanceof McpError && err.code !== "mcp_config_invalid") this.fail(gen, s, err);
      return { content: `Error: ${errorMessage(err)}`, status: "error" };
    }
    try {
      const result = await conn.callTool(tool, args, { timeoutMs, signal: runtime.signal });
      return convertCallToolResult(result, conn.pathScope);
    } catch (err) {
      if (conn.closed && s.kind === "stdio") this.sessions.remove(server, userId, threadId, conn);
      return { content: `Error: ${errorMessage(err)}`, status: "error" };
    }
  }

  /** The launch settings: the host's, or a private temp data dir with sandbox `auto`. */
  private settings(): McpLaunchSettings {
    this.launchSettings ??= this.options.launch ?? {
      dataDir: mkdtempSync(path.join(os.tmpdir(), "deerflow-mcp-")),
      warn: (m) => this.options.logger?.warn(m),
    };
    return this.launchSettings;
  }

  /** Plan a stdio process for discovery (no thread) or for one thread's session. */
  private plan(s: ServerState, scope: LaunchScope) {
    const env = resolveEnvRefs(s.config.env, this.options.env ?? process.env);
    return planStdioLaunch(s.name, s.config, env, scope, this.settings());
  }

  /**
   * Start a stdio session for one thread: in the server's own launch
   * directory with a clean environment, sandboxed when bubblewrap works (the
   * thread's user-data at `/mnt/user-data`).
   */
  private async openSession(s: ServerState, dirs: ThreadDirs): Promise<McpConnection> {
    const stdio = await this.plan(s, { thread: dirs });
    return McpConnection.open(s.name, s.config, { stdio, initTimeoutMs: secondsToMs(s.config.session_init_timeout) });
  }
}
