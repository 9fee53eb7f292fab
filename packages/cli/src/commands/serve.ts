import { existsSync } from "node:fs";
import path from "node:path";
import { resolveConfigPath } from "../../../harness/src/config";
import type { AppConfig } from "../../../harness/src/config";
import { DeerFlowRuntime } from "../../../harness/src/deerflow-runtime";
import { startServer } from "../../../server/src";
import type { Gateway } from "../../../server/src";
import { bindHostExposure } from "../../../server/src/security";
import { resolveAgentFactory } from "../agent-source";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import { startDemoModel } from "../demo/demo-config";
import type { Terminal } from "../io";
import { ensureWebBuild, WEB_DIST } from "../web-build";

/** Help of `deerflow serve`. */
export const SERVE_HELP = `Usage: deerflow serve [options]

Start the DeerFlow gateway (LangGraph-compatible API + REST endpoints) and the
web UI. The UI is built on the first start when its sources are present (else
/ says what to run). Prints the URL when ready; Ctrl-C stops it.

Options:
  --port N           port (default 2026)
  --demo             when no config.yaml is found, start with the scripted demo
                     model (a test double, not an LLM: for every message it writes
                     and presents a small report) instead of failing
  --no-web-build     do not build the web UI on start (also DEERFLOW_SKIP_WEB_BUILD=1)
  --host HOST        interface to bind (default 127.0.0.1). An address other machines
                     can reach (0.0.0.0, ::, a LAN address, a name that is not
                     loopback) also needs --allow-unauthenticated
  --allow-unauthenticated
                     listen on a non-loopback --host although the gateway has no
                     users or login yet: whoever can connect controls the agent
${COMMON_HELP}`;

/**
 * Refuse a non-loopback `--host` unless `--allow-unauthenticated` is given;
 * with it, return the warning to print. The gateway has no users yet: every
 * client that can connect acts as the one local user.
 */
export async function checkServeHost(host: string, allowUnauthenticated: boolean): Promise<string | undefined> {
  const exposure = await bindHostExposure(host);
  if (exposure.loopback) return undefined;
  const where = exposure.addresses.length && exposure.addresses[0] !== host ? `${host} (${exposure.addresses.join(", ")})` : host;
  const opens =
    "anyone who can connect can run the agent and its tools, read and upload every thread's files, add MCP servers " +
    "(which start commands on this machine), install skills and rewrite memory";
  if (!allowUnauthenticated) {
    throw new UsageError(
      `Refusing to listen on ${where}: other machines can reach it, and the gateway has no users or login yet, so ${opens}. ` +
        "Keep the default --host 127.0.0.1, or put it behind your own authenticating proxy and pass --allow-unauthenticated to listen anyway.",
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
  });
  if (values.help) {
    term.line(SERVE_HELP);
    return 0;
  }
  const port = values.port === undefined ? 2026 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got '${values.port}'`, "serve");
  const host = values.host ?? "127.0.0.1";
  // before anything starts: a refused exposure leaves nothing behind
  const exposureWarning = await checkServeHost(host, values["allow-unauthenticated"] === true);
  if (exposureWarning) term.error(exposureWarning);
  const common = commonOptions(values);
  const injected = await resolveAgentFactory();
  let config: AppConfig | undefined;
  let demo: Awaited<ReturnType<typeof startDemoModel>> | undefined;
  if (values.demo && !common.configPath && !injected && !findConfig(common.cwd)) {
    demo = await startDemoModel();
    config = demo.config;
    term.line("No config.yaml found: starting in DEMO mode with the scripted demo model (a test double, not an LLM).");
    term.line("For any message it walks through a scripted task: it writes and presents a small report.");
    term.line(`Run \`${demo.configureCommand}\` to configure a real provider.`);
  }
  if (!values["no-web-build"] && process.env.DEERFLOW_SKIP_WEB_BUILD !== "1") {
    const web = await ensureWebBuild({ log: (l) => term.line(l) });
    if (!web.ready) term.error(`Web UI unavailable: ${web.reason}. The API works; / says how to build the UI.`);
  } else if (!existsSync(path.join(WEB_DIST, "index.html"))) {
    term.error("Web UI not built (build skipped): run `npm run build:web`; the API works meanwhile.");
  }
  // One runtime for the whole server: config (re-read when config.yaml or extensions_config.json changes),
  // checkpointer, stores, sandbox, agents. Closed on shutdown, which also releases sandboxes.
  const runtime = await DeerFlowRuntime.open({
    configPath: common.configPath,
    cwd: common.cwd,
    config,
    dataDir: common.dataDir,
    agentFactory: injected,
    log: (m) => term.error(m),
  });
  let gateway: Gateway;
  let url: string;
  try {
    ({ gateway, url } = await startServer({
      runtime,
      port,
      host,
      quiet: true,
      demoMode: demo ? { configureCommand: demo.configureCommand } : null,
    }));
  } catch (err) {
    await runtime.close();
    await demo?.close();
    throw err;
  }
  term.line(`DeerFlow is running at ${url}`);
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

/** Whether a config.yaml would be found from `cwd` (the normal lookup order). */
function findConfig(cwd: string): boolean {
  try {
    resolveConfigPath({ cwd });
    return true;
  } catch {
    return false;
  }
}
