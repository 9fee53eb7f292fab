import type { AddressInfo } from "node:net";
import path from "node:path";
import { DeerFlowRuntime, openSqliteStores, PathAccessError, persistenceDbPath, protectHostPort, UploadError, ValidationError } from "@deerflow-ts/harness";
import type { PersistenceStores, RunService } from "@deerflow-ts/harness";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import type { Context } from "hono";
import { authMiddleware, AuthRuntime } from "./auth";
import { ChannelsHost, registerChannelRoutes, registerLarkIntegrationRoutes } from "./channels";
import type { AccountDatabase, AuthSection, AuthSettings } from "./auth";
import type { GatewayContext } from "./context";
import { HttpError } from "./http-error";
import { attachObservability, messageSink } from "./observability";
import type { GatewayOptions, ResolvedGatewayOptions } from "./options";
import { resolveOptions } from "./options";
import { registerAgentRoutes } from "./routes/agents";
import { registerAppInfoRoutes } from "./routes/app-info";
import { registerArtifactRoutes } from "./routes/artifacts";
import { registerAssistantRoutes } from "./routes/assistants";
import { registerAuthRoutes } from "./routes/auth";
import { registerMcpRoutes } from "./routes/mcp";
import { registerMemoryRoutes } from "./routes/memory";
import { registerRegenerateRoutes } from "./routes/regenerate";
import { registerRunRoutes } from "./routes/runs";
import { registerScheduledTaskRoutes } from "./routes/scheduled-tasks";
import { registerSkillRoutes } from "./routes/skills";
import { registerTestSeedRoutes } from "./routes/test-seed";
import { registerThreadDataRoutes } from "./routes/thread-data";
import { registerThreadAccess } from "./routes/thread-access";
import { registerThreadRoutes } from "./routes/threads";
import { registerUploadRoutes } from "./routes/uploads";
import { registerWorkspaceChangesRoutes } from "./routes/workspace-changes";
import { runServiceHttpError } from "./runs/run-errors";
import { startScheduler } from "./scheduled-tasks";
import { HostPathMasker, publicStreamData, RequestGuard } from "./security";
import type { RequestGuardSettings } from "./security";
import { defaultWebDist, registerStaticUi } from "./static-ui";

/** A running (or startable) gateway. */
export interface Gateway {
  /** The Hono app (usable in-process with `app.request()`). */
  readonly app: Hono;
  readonly options: ResolvedGatewayOptions;
  readonly stores: PersistenceStores;
  /** The runtime's run service (create, stream, cancel, wait). */
  readonly runs: RunService;
  /** The runtime it serves. */
  readonly runtime: DeerFlowRuntime;
  /** Sign-in: settings, the account store (`auth.db`), the clock. */
  readonly auth: AuthRuntime;
  /** Runs found `pending`/`running` at startup and marked `error`. */
  readonly recoveredRuns: string[];
  /** The IM channels (started by `start()` when `channels.<name>.enabled`). */
  readonly channels: ChannelsHost;
  /** Listen on `host:port` (port 0 = any free port). Resolves with the base URL. */
  start(listen?: { port?: number; host?: string }): Promise<string>;
  /** Interrupt runs, stop listening; close the runtime if the gateway opened it. */
  close(): Promise<void>;
}

function onError(log: (m: string) => void, paths: HostPathMasker) {
  return (err: Error, c: Context) => {
    err = runServiceHttpError(err) ?? err;
    // error texts name the files they touched: clients see virtual paths, never the data dir's host path
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json({ detail: paths.mask(err.detail) }, err.status as 400);
    }
    // harness upload/artifact errors carry their HTTP status; the client gets the same errors
    if (err instanceof UploadError) return c.json({ detail: paths.maskText(err.message) }, err.status as 400);
    if (err instanceof PathAccessError) return c.json({ detail: paths.maskText(err.message) }, 403);
    log(`[gateway] ${c.req.method} ${new URL(c.req.url).pathname} failed: ${err.name}: ${err.message}`);
    return c.json({ detail: "Internal server error" }, 500);
  };
}

/**
 * Build the gateway: LangGraph-compatible threads/runs/SSE API and DeerFlow's
 * REST endpoints, mounted under both `/api` and `/api/langgraph`, plus
 * `/health` and the web UI at `/`. Marks runs left `pending`/`running` by a
 * dead process as `error` before serving.
 */
export async function createGateway(input: GatewayOptions): Promise<Gateway> {
  let runtime = input.runtime;
  let ownedRuntime = false;
  let ownedStores: PersistenceStores | undefined;
  if (!runtime) {
    if (!input.agentFactory) throw new ValidationError("createGateway needs a `runtime` (or an `agentFactory` for a gateway-owned runtime)");
    const dataDir = path.resolve(input.dataDir ?? ".deer-flow");
    ownedStores = input.stores ?? openSqliteStores(input.database ?? persistenceDbPath(dataDir));
    runtime = await DeerFlowRuntime.open({
      agentFactory: input.agentFactory,
      checkpointer: input.checkpointer,
      stores: ownedStores,
      dataDir,
      log: input.log ?? (input.logger ? messageSink(input.logger) : (m) => console.error(m)),
    });
    ownedRuntime = true;
  }
  const logger = input.logger;
  const options = resolveOptions({ ...input, runtime, log: input.log ?? (logger ? messageSink(logger) : undefined) });
  const stores = runtime.stores;
  const ts = new Date().toISOString();
  // One process's backends: whatever is still pending/running was left by a dead process. Shared backends: other
  // live processes execute those runs, and a dead one's runs are resumed by the runtime's takeover loop instead.
  const recovered = runtime.runs.shared ? [] : await stores.runs.recoverOrphans(ts);
  if (!runtime.runs.shared) for (const t of await stores.threads.listRunning()) await stores.threads.update(t.threadId, { status: "error", updatedAt: ts });
  if (recovered.length) options.log(`[gateway] marked ${recovered.length} orphaned run(s) as error`);

  const runs = runtime.runs;
  configureRuns(runtime, input, options);
  const authSource = input.auth;
  const auth = new AuthRuntime({
    section: () => (typeof authSource === "function" ? authSource() : (authSource ?? authSection(runtime, options))),
    dataDir: options.dataDir,
    // on database.backend postgres the accounts live there too, through the runtime's pool
    database: () => ((runtime.config() ?? options.appConfig) as { database?: AccountDatabase | null } | undefined)?.database,
    pool: runtime.pgPool ? () => runtime.pgPool! : undefined,
    store: input.userStore,
    now: input.authClock,
    trustedProxies: input.trustedProxies ?? process.env.AUTH_TRUSTED_PROXIES,
    disabledUserId: options.userId,
    log: options.log,
  });
  // a broken auth section (enabled without a secret) stops the start, with the fix in the message
  const authAtStart = auth.check();
  if (authAtStart.disabledBy === "env") {
    options.log("[gateway] DEER_FLOW_AUTH_DISABLED=1: sign-in is off and every request is the admin 'default'. Do not use this on a shared or reachable server.");
  }
  const ctx: GatewayContext = { options, stores, runs, runtime, auth };

  // No error handler of its own: Hono wraps every handler of a mounted app that has one in an extra compose (two
  // more promises per handler and request). Errors reach the outer app's handler, the same function.
  const api = new Hono();
  const guard = new RequestGuard(() => guardSettings(ctx), options.log);
  // Identifies the caller (CSRF first) before any route or per-thread authorisation runs.
  api.use("*", authMiddleware(auth, () => guard.allowedOrigins()));
  registerThreadAccess(api, ctx);
  registerThreadRoutes(api, ctx);
  registerRegenerateRoutes(api, ctx);
  registerRunRoutes(api, ctx);
  registerWorkspaceChangesRoutes(api, ctx);
  registerThreadDataRoutes(api, ctx);
  registerUploadRoutes(api, ctx);
  registerArtifactRoutes(api, ctx);
  registerSkillRoutes(api, ctx); // before app-info, whose `/skills` is an empty placeholder
  registerScheduledTaskRoutes(api, ctx);
  registerAppInfoRoutes(api, ctx);
  registerAssistantRoutes(api, ctx);
  registerAgentRoutes(api, ctx);
  registerAuthRoutes(api, ctx);
  registerMemoryRoutes(api, ctx);
  registerMcpRoutes(api, ctx);
  registerTestSeedRoutes(api, ctx); // only with DEERFLOW_ENABLE_TEST_SEED=1 (end-to-end tests)
  // the background poller only with scheduler.enabled (DeerFlow's master switch); the routes are always there
  startScheduler(ctx);
  // a channel message runs as a request would: the `/goal` command calls the goal routes in-process
  const channels = new ChannelsHost({ ...input.channels, ctx, request: (p, init) => Promise.resolve(app.request(p, init)) });
  registerChannelRoutes(api, ctx, channels);
  registerLarkIntegrationRoutes(api, ctx, channels);

  const app = new Hono();
  // first, so a request the guard or the sign-in refuses still gets its line and its X-Request-Id; /metrics when on
  await attachObservability(app, ctx, { logger, metrics: input.metrics });
  app.onError(onError(options.log, new HostPathMasker([options.dataDir, options.baseDir])));
  // before every route, the static UI included (see RequestGuard)
  app.use("*", guard.middleware());
  app.get("/health", (c) => c.json({ status: "healthy", service: "deer-flow-gateway" }));
  app.route("/api/langgraph", api);
  app.route("/api", api);
  const web = options.webDistDir === null ? undefined : (options.webDistDir ?? defaultWebDist());
  // Registered even before the UI is built: `/` then explains how to build it instead of a JSON 404.
  if (web) registerStaticUi(app, web);
  app.notFound((c) => c.json({ detail: "Not Found" }, 404));

  let server: ReturnType<typeof serve> | undefined;
  // While it listens, the sandbox's egress proxy refuses this port on every address of this machine.
  let releasePort: (() => void) | undefined;
  return {
    app,
    options,
    stores,
    runs,
    runtime,
    auth,
    recoveredRuns: recovered.map((r) => r.runId),
    channels,
    start(listen = {}) {
      const port = listen.port ?? 2026;
      const host = listen.host ?? "127.0.0.1";
      guard.setBindHost(host);
      return new Promise<string>((resolve, reject) => {
        const s = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
          releasePort = protectHostPort(info.port);
          // connecting to the platforms never holds up listening; a channel that cannot connect shows as `error`
          void channels.start();
          resolve(`http://${host.includes(":") ? `[${host}]` : host}:${info.port}`);
        });
        s.once("error", reject);
        server = s;
      });
    },
    async close() {
      // Channels first: no new inbound message starts a run while the runs are interrupted.
      await channels.close();
      // The runtime's run service outlives a gateway that was handed the runtime: only its runs stop here.
      await runs.interruptAll();
      if (server) {
        const s = server as import("node:http").Server;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections?.();
        });
        server = undefined;
      }
      releasePort?.();
      releasePort = undefined;
      await auth.close();
      if (ownedRuntime) {
        await runtime.close();
        await ownedStores?.close();
      }
    },
  };
}

/** `server.allowed_hosts`/`allowed_origins` as of now (the runtime's current config, else `appConfig`), plus the options'. */
function guardSettings(ctx: GatewayContext): RequestGuardSettings {
  const cfg = (ctx.runtime.config() ?? ctx.options.appConfig) as { server?: { allowed_hosts?: string[]; allowed_origins?: string[] } | null } | undefined;
  const server = cfg?.server ?? undefined;
  return {
    allowedHosts: [...(server?.allowed_hosts ?? []), ...(ctx.options.allowedHosts ?? [])],
    allowedOrigins: [...(server?.allowed_origins ?? []), ...(ctx.options.allowedOrigins ?? [])],
  };
}

/** The `auth:` section as of now: the runtime's current config, else `appConfig`. */
function authSection(runtime: DeerFlowRuntime, options: ResolvedGatewayOptions): AuthSection | AuthSettings | null | undefined {
  const cfg = (runtime.config() ?? options.appConfig) as { auth?: AuthSection | null } | undefined;
  return cfg?.auth;
}

/** Create and start a gateway; prints and returns the URL. */
export async function startServer(
  options: GatewayOptions & { port?: number; host?: string; quiet?: boolean },
): Promise<{ gateway: Gateway; url: string }> {
  const gateway = await createGateway(options);
  const url = await gateway.start({ port: options.port, host: options.host });
  if (!options.quiet) console.log(`DeerFlow gateway listening on ${url}`);
  return { gateway, url };
}

/**
 * How the gateway presents runs: payloads and errors with host paths
 * rewritten, the run timeout, its log prefix; with the in-memory bridge, the
 * replay window (`replayBufferSize`, default `stream_bridge.queue_maxsize`)
 * and how long a finished run's events stay joinable (`reapAfterMs`,
 * default 60 s, bounded by `stream_bridge.stream_ttl_seconds`).
 */
function configureRuns(runtime: DeerFlowRuntime, input: GatewayOptions, options: ResolvedGatewayOptions): void {
  const paths = new HostPathMasker([options.dataDir, options.baseDir]);
  const bridge = (runtime.config() as { stream_bridge?: { queue_maxsize?: number; stream_ttl_seconds?: number } | null } | undefined)?.stream_bridge;
  const ttlSeconds = Math.min(options.reapAfterMs / 1000, bridge?.stream_ttl_seconds ?? Number.POSITIVE_INFINITY);
  runtime.runs.configure({
    eventData: publicStreamData,
    maskError: (text) => paths.maskText(text),
    runTimeoutMs: options.runTimeoutMs,
    logPrefix: "[gateway]",
    memoryReplay: { queueMaxsize: input.replayBufferSize ?? bridge?.queue_maxsize ?? options.replayBufferSize, ttlSeconds },
  });
}
