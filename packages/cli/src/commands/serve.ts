import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigManager, listenAddressFromEnv, readEnv, resolveConfigPath } from "@deerflow-ts/harness/config";
import type { AppConfig, ConfigLogger } from "@deerflow-ts/harness/config";
import { ConfigError } from "@deerflow-ts/harness/errors";
import { DeerFlowRuntime } from "@deerflow-ts/harness/deerflow-runtime";
import { messageSink, resolveAuthSettings, startServer } from "@deerflow-ts/server";
import type { AuthSettings, Gateway } from "@deerflow-ts/server";
import { bindHostExposure } from "@deerflow-ts/server";
import { resolveAgentFactory } from "../agent-source";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { CommonOptions } from "../common";
import { startDemoModel } from "../demo/demo-config";
import type { Terminal } from "../io";
import { ensureWebBuild, WEB_DIST } from "../web-build";
import { authOffReason, liveAuthSection, signInBanner } from "./serve-auth";
import { withStartupFix } from "./serve-errors";
import { serveLogging } from "./serve-logs";
import { registerServeProcess, unsharedPeersWarning } from "./serve-peers";
import { checkWorkersAllowed, isServeWorker, parseWorkers, reportListening, runSharing, runWorkersPrimary } from "./serve-workers";

/** Help of `deerflow serve`. */
export const SERVE_HELP = `Usage: deerflow serve [options]

Start the DeerFlow gateway (LangGraph-compatible API + REST endpoints) and the
web UI. The UI is built on the first start when its sources are present (else
/ says what to run). Prints the URL when ready; Ctrl-C stops it.

Options:
  --port N           port (default: $PORT, else 2026)
  --demo             when no config.yaml is found, start with the scripted demo
                     model (a test double, not an LLM: for every message it writes
                     and presents a small report) instead of failing
  --no-web-build     do not build the web UI on start (also DEER_FLOW_SKIP_WEB_BUILD=1)
  --host HOST        interface to bind (default: $HOST, else 127.0.0.1). An address other machines
                     can reach (0.0.0.0, ::, a LAN address, a name that is not
                     loopback) needs sign-in on (auth.enabled: true in config.yaml;
                     \`deerflow init\` sets it up), or --allow-unauthenticated
  --allow-unauthenticated
                     listen on a non-loopback --host with sign-in off (behind your
                     own authenticating proxy): whoever can connect controls the agent
  --workers N        start N gateway processes sharing the port (default 1). N > 1
                     needs database.backend: postgres and stream_bridge.type: redis,
                     so every process sees every run (docs/scale-out.md)

Sign-in: with auth.enabled: true the gateway asks for an account (see
\`deerflow users\`); on start it says whether sign-in is required and, while no
admin exists, the /setup URL that creates the first one. .env (next to
config.yaml, and in the working directory) is read before config.yaml.
${COMMON_HELP}`;

/**
 * Whether `serve` may listen on `host`. Loopback always; an address other
 * machines can reach when sign-in is on, or with `--allow-unauthenticated`
 * (then the returned warning is printed). Otherwise refused: with sign-in off
 * every client that can connect acts as the local admin.
 */
export async function checkServeHost(host: string, allowUnauthenticated: boolean, auth?: AuthSettings): Promise<string | undefined> {
  const exposure = await bindHostExposure(host);
  if (exposure.loopback || auth?.enabled) return undefined;
  const where = exposure.addresses.length && exposure.addresses[0] !== host ? `${host} (${exposure.addresses.join(", ")})` : host;
  const opens =
    "anyone who can connect can run the agent and its tools, read and upload every thread's files, add MCP servers " +
    "(which start commands on this machine), install skills and rewrite memory";
  if (!allowUnauthenticated) {
    const off = auth ? authOffReason(auth) : "the config has no `auth.enabled: true`";
    throw new UsageError(
      `Refusing to listen on ${where}: other machines can reach it, and sign-in is off (${off}), so ${opens}. ` +
        (auth?.disabledBy === "env"
          ? "Unset DEER_FLOW_AUTH_DISABLED to turn sign-in on, "
          : "Turn sign-in on (`deerflow init` and answer yes, or `auth: {enabled: true, jwt_secret: $DEER_FLOW_JWT_SECRET}` in config.yaml with the secret in .env), ") +
        "keep the default --host 127.0.0.1, or put it behind your own authenticating proxy and pass --allow-unauthenticated to listen anyway.",
      "serve",
    );
  }
  return (
    `WARNING: listening on ${where} without authentication (--allow-unauthenticated): ${opens}. ` +
    "Browsers are still held to this gateway's own names and origin (server.allowed_hosts, server.allowed_origins in config.yaml)."
  );
}

/** `deerflow serve`: returns null while serving. */
export async function serveCommand(argv: string[], term: Terminal): Promise<number | null> {
  const { values } = parseCommand("serve", argv, {
    port: { type: "string" },
    host: { type: "string" },
    demo: { type: "boolean" },
    "no-web-build": { type: "boolean" },
    "allow-unauthenticated": { type: "boolean" },
    workers: { type: "string" },
  });
  if (values.help) {
    term.line(SERVE_HELP);
    return 0;
  }
  const fromEnv = listenAddressFromEnv(process.env);
  const port = values.port === undefined ? (fromEnv.port ?? 2026) : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got '${values.port}'`, "serve");
  const host = values.host ?? fromEnv.host ?? "127.0.0.1";
  const common = commonOptions(values);
  try {
    return await startServe(values, { host, port, common }, term);
  } catch (err) {
    // every start-up failure (port, config, PostgreSQL, Redis, auth, data dir) says what to change
    throw withStartupFix(err, { host, port, dataDir: common.dataDir });
  }
}

/** The flags of `serve` that {@link startServe} reads. */
interface ServeFlags {
  demo?: boolean;
  "no-web-build"?: boolean;
  "allow-unauthenticated"?: boolean;
  workers?: string;
}

/** Everything `serve` does after parsing its flags, up to listening (returns null while serving). */
async function startServe(values: ServeFlags, at: { host: string; port: number; common: CommonOptions }, cliTerm: Terminal): Promise<number | null> {
  let term = cliTerm;
  const { host, port, common } = at;
  const workers = parseWorkers(values.workers);
  // a worker forked by `--workers N`: the primary already checked the config, the host and built the UI
  const worker = isServeWorker();
  const injected = await resolveAgentFactory();
  const demoMode = !!values.demo && !common.configPath && !injected && !findConfig(common.cwd);
  // The config (and the .env files before it) is read first: whether sign-in is on decides which --host
  // is allowed, and a bad auth section fails here. The runtime then serves this same manager.
  const configManager = demoMode ? undefined : openConfig(common, (m) => term.error(m), !!injected);
  // log_level and logging.enhance: with format json every later stdout line (banners too) is one JSON object
  const logging = await serveLogging(configManager?.get(), term);
  term = logging.term;
  const auth = resolveAuthSettings(configManager?.get().auth, process.env);
  const sharing = runSharing(configManager?.get());
  if (!worker) checkWorkersAllowed(workers, configManager?.get(), demoMode);
  if (!worker && configManager) term.line(configBanner(configManager.getLoaded().path, !!values.demo));
  // before anything starts: a refused exposure leaves nothing behind
  const exposureWarning = await checkServeHost(host, values["allow-unauthenticated"] === true, auth);
  if (exposureWarning && !worker) term.error(exposureWarning);
  const exposed = !(await bindHostExposure(host)).loopback;
  let config: AppConfig | ConfigManager | undefined = configManager;
  let demo: Awaited<ReturnType<typeof startDemoModel>> | undefined;
  if (demoMode) {
    demo = await startDemoModel();
    config = demo.config;
    term.line(`No config.yaml found (looked for ${searchedConfigPaths(common.cwd).join(", ")}): starting in DEMO mode with the scripted demo model (a test double, not an LLM).`);
    term.line("For any message it walks through a scripted task: it writes and presents a small report.");
    term.line(`Run \`${demo.configureCommand}\` to configure a real provider.`);
  }
  if (worker) {
    // the primary built (or reported) the web UI
  } else if (!values["no-web-build"] && readEnv("DEER_FLOW_SKIP_WEB_BUILD") !== "1") {
    const web = await ensureWebBuild({ log: (l) => term.line(l) });
    if (!web.ready) term.error(`Web UI unavailable: ${web.reason}. The API works; / says how to build the UI.`);
    else if (web.reason) term.error(`Web UI not rebuilt: ${web.reason}.`);
  } else if (!existsSync(path.join(WEB_DIST, "index.html"))) {
    term.error("Web UI not built (build skipped): run `npm run build:web`; the API works meanwhile.");
  }
  if (workers > 1 && !worker) {
    const database = configManager?.get().database;
    return runWorkersPrimary({ workers, term, banner: async (url) => [`DeerFlow is running at ${url}`, ...(await signInBanner(auth, common.dataDir, browsableUrl(url), database))].join("\n") });
  }
  if (!worker) {
    // several processes on one data dir share threads and files; only PostgreSQL + Redis share runs
    const { peers } = registerServeProcess(common.dataDir);
    if (peers.length && !sharing.shared) term.error(unsharedPeersWarning(peers, common.dataDir, sharing));
  }
  // One runtime for the whole server: config (re-read when config.yaml or extensions_config.json changes),
  // checkpointer, stores, sandbox, agents. Closed on shutdown, which also releases sandboxes.
  const runtime = await DeerFlowRuntime.open({
    configPath: common.configPath,
    cwd: common.cwd,
    config,
    dataDir: common.dataDir,
    agentFactory: injected,
    log: messageSink(logging.logger),
  });
  let gateway: Gateway;
  let url: string;
  try {
    ({ gateway, url } = await startServer({
      runtime,
      port,
      host,
      quiet: true,
      logger: logging.logger,
      webDistDir: WEB_DIST,
      demoMode: demo ? { configureCommand: demo.configureCommand } : null,
      auth: liveAuthSection({ config: () => runtime.config(), pinnedOn: exposed && auth.enabled, log: (m) => term.error(m) }),
    }));
  } catch (err) {
    await runtime.close();
    await demo?.close();
    throw err;
  }
  if (worker) reportListening(url);
  else term.line([`DeerFlow is running at ${url}`, ...(await signInBanner(auth, common.dataDir, browsableUrl(url), runtime.config()?.database))].join("\n"));
  const stop = async () => {
    await gateway.close();
    await runtime.close();
    await demo?.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return null;
}

/**
 * The config manager `serve` runs on, loaded now (this also reads `.env`), or
 * undefined when there is no config.yaml and an injected agent needs none.
 */
function openConfig(common: { configPath?: string; cwd: string }, log: (m: string) => void, agentInjected: boolean): ConfigManager | undefined {
  const logger: ConfigLogger = { warn: (m) => log(`[deerflow] config: ${m}`), info: () => undefined };
  const manager = new ConfigManager({ path: common.configPath, cwd: common.cwd, logger });
  try {
    manager.get();
    return manager;
  } catch (err) {
    if (err instanceof ConfigError && err.code === "config_not_found" && !common.configPath && agentInjected) return undefined;
    throw err;
  }
}

/**
 * The line naming the config file `serve` runs on (absolute path). With
 * `--demo` it also says why there is no demo: a config.yaml left in the
 * directory (e.g. by `deerflow init`) ends demo mode, which is never silent.
 */
export function configBanner(configPath: string, demoAsked: boolean): string {
  const line = `Config: ${path.resolve(configPath)}`;
  return demoAsked ? `${line} (--demo is ignored: it applies only when no config.yaml is found; move or delete this file for the demo)` : line;
}

/** The URL a browser on this machine opens for a wildcard bind (0.0.0.0 / ::). */
function browsableUrl(url: string): string {
  return url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:");
}

/** The config.yaml paths the normal lookup tried from `cwd` (the demo banner names them). */
function searchedConfigPaths(cwd: string): string[] {
  try {
    return [resolveConfigPath({ cwd })];
  } catch (err) {
    const searched = err instanceof ConfigError ? err.details.searched : undefined;
    return Array.isArray(searched) ? searched.map(String) : [path.join(cwd, "config.yaml")];
  }
}

/** Whether a config.yaml would be found from `cwd` (the normal lookup order). */
function findConfig(cwd: string): boolean {
  try {
    resolveConfigPath({ cwd });
    return true;
  } catch {
    return false;
  }
}
