import { mkdirSync } from "node:fs";
import path from "node:path";
import { SqliteCheckpointStore } from "../../../harness/src/checkpoints";
import { leadAgentFactory } from "../../../harness/src/client";
import type { AgentFactory } from "../../../harness/src/client";
import { appConfigFromText, loadAppConfig } from "../../../harness/src/config";
import { ConfigError } from "../../../harness/src/errors";
import { startScriptedLLMServer } from "../../../harness/src/testing";
import type { AppConfig } from "../../../harness/src/config";
import type { Agent } from "../../../harness/src/runtime";
import { startServer } from "../../../server/src";
import { resolveAgentFactory } from "../agent-source";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow serve`. */
export const SERVE_HELP = `Usage: deerflow serve [options]

Start the DeerFlow gateway (LangGraph-compatible API + REST endpoints) and the
web UI when it has been built. Prints the URL when ready; Ctrl-C stops it.

Options:
  --port N           port (default 2026)
  --demo             when no config.yaml is found, start with the scripted demo
                     model (a test double that echoes, not an LLM) instead of failing
  --host HOST        interface to bind (default 127.0.0.1; use 0.0.0.0 to expose)
${COMMON_HELP}`;

/** Adapt the client's agent factory to the gateway's per-run factory (agents cached per runtime config). */
export function gatewayAgentFactory(
  factory: AgentFactory,
  base: { appConfig: AppConfig | undefined; checkpointer: SqliteCheckpointStore; dataDir: string },
): (run: { configurable: Record<string, unknown>; context: Record<string, unknown> }) => Promise<Agent> {
  const cache = new Map<string, Promise<Agent>>();
  return (run) => {
    const c = { ...run.configurable, ...run.context };
    const runtimeConfig = {
      model_name: (c.model_name ?? c.model) as string | undefined,
      thinking_enabled: c.thinking_enabled === undefined ? true : !!c.thinking_enabled,
      is_plan_mode: !!c.is_plan_mode,
      subagent_enabled: !!c.subagent_enabled,
      agent_name: c.agent_name as string | undefined,
    };
    const userId = typeof c.user_id === "string" ? c.user_id : "default";
    const key = JSON.stringify([runtimeConfig, userId]);
    let agent = cache.get(key);
    if (!agent) {
      agent = Promise.resolve(factory({ ...base, runtimeConfig, userId }));
      cache.set(key, agent);
      agent.catch(() => cache.delete(key));
    }
    return agent;
  };
}

/** `deerflow serve`: returns null while serving. */
export async function serveCommand(argv: string[], term: Terminal): Promise<number | null> {
  const { values } = parseCommand("serve", argv, { port: { type: "string" }, host: { type: "string" }, demo: { type: "boolean" } });
  if (values.help) {
    term.line(SERVE_HELP);
    return 0;
  }
  const port = values.port === undefined ? 2026 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got '${values.port}'`, "serve");
  const common = commonOptions(values);
  const injected = await resolveAgentFactory();
  let appConfig: AppConfig | undefined;
  let demo: { close(): Promise<void> } | undefined;
  try {
    appConfig = loadAppConfig({ path: common.configPath, cwd: common.cwd }).config;
  } catch (err) {
    if (values.demo && !common.configPath && err instanceof ConfigError && err.code === "config_not_found") {
      const llm = await startScriptedLLMServer({ onExhausted: "echo" });
      demo = llm;
      appConfig = appConfigFromText(
        [
          "models:",
          `  - { name: demo, display_name: "Demo (scripted test model)", use: openai-compatible, model: scripted, base_url: "${llm.url}/v1", api_key: demo }`,
        ].join("\n"),
      ).config;
      term.line("No config.yaml found: starting in DEMO mode with the scripted test model (it echoes; it is not an LLM).");
      term.line("Run `npx deerflow init` to configure a real provider.");
    } else if (!injected) throw err;
  }
  mkdirSync(path.join(common.dataDir, "data"), { recursive: true });
  const checkpointer = new SqliteCheckpointStore(path.join(common.dataDir, "data", "deerflow.db"));
  const { gateway, url } = await startServer({
    agentFactory: gatewayAgentFactory(injected ?? leadAgentFactory, { appConfig, checkpointer, dataDir: common.dataDir }),
    checkpointer,
    dataDir: common.dataDir,
    models: (appConfig?.models ?? []) as Array<Record<string, unknown>>,
    tokenUsageEnabled: appConfig?.token_usage?.enabled !== false,
    uploads: appConfig?.uploads,
    port,
    host: values.host ?? "127.0.0.1",
    quiet: true,
  });
  term.line(`DeerFlow is running at ${url}`);
  const stop = async () => {
    await gateway.close?.();
    await checkpointer.close();
    await demo?.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return null;
}
