import { createLeadAgentFactory } from "../agents";
import type { LeadAgentFactory } from "../agents";
import type { AppConfig } from "../config";
import { ConfigError } from "../errors";
import type { Agent } from "../runtime";
import type { AgentBuildRequest } from "./types";

const factories = new WeakMap<AppConfig, WeakMap<object, Map<string, LeadAgentFactory>>>();

function factoryFor(request: AgentBuildRequest & { appConfig: AppConfig }): LeadAgentFactory {
  let byCheckpointer = factories.get(request.appConfig);
  if (!byCheckpointer) {
    byCheckpointer = new WeakMap();
    factories.set(request.appConfig, byCheckpointer);
  }
  let byDir = byCheckpointer.get(request.checkpointer);
  if (!byDir) {
    byDir = new Map();
    byCheckpointer.set(request.checkpointer, byDir);
  }
  let factory = byDir.get(request.dataDir);
  if (!factory) {
    factory = createLeadAgentFactory({ config: request.appConfig, baseDir: request.dataDir, checkpointer: request.checkpointer });
    byDir.set(request.dataDir, factory);
  }
  return factory;
}

/**
 * The default agent of the embedded client, the CLI and `deerflow serve`:
 * DeerFlow's lead agent (tools, sandbox, full middleware chain) built from the
 * loaded config. One lead-agent factory (and so one sandbox provider) is kept
 * per (config, checkpointer, data dir).
 */
export function leadAgentFactory(request: AgentBuildRequest): Agent {
  if (!request.appConfig) {
    throw new ConfigError("No config.yaml was loaded, so no model is available. Run `deerflow init` or pass --config PATH.", {
      code: "config_not_found",
    });
  }
  const rc = request.runtimeConfig;
  return factoryFor(request as AgentBuildRequest & { appConfig: AppConfig }).makeLeadAgent({
    context: {
      ...(rc.model_name ? { model_name: rc.model_name } : {}),
      // Only an explicit "off" is passed: thinking on is the default and is downgraded silently.
      ...(rc.thinking_enabled === false ? { thinking_enabled: false } : {}),
      is_plan_mode: rc.is_plan_mode,
      subagent_enabled: rc.subagent_enabled,
      ...(rc.agent_name ? { agent_name: rc.agent_name } : {}),
      user_id: request.userId,
    },
  });
}
