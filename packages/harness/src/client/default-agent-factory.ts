import { ConfigError } from "../errors";
import { createChatModel } from "../models";
import { createAgent } from "../runtime";
import type { Agent } from "../runtime";
import type { AgentBuildRequest } from "./types";

/** System prompt of {@link basicAgentFactory}. */
export const BASIC_AGENT_PROMPT =
  "You are DeerFlow, a helpful assistant. Answer clearly and concisely. When you are unsure, say so.";

/**
 * The client's fallback agent: the configured chat model with no tools, run
 * by `createAgent` and persisted in the client's checkpointer. Used when no
 * `agentFactory` is given; hosts that have the full lead agent pass it as
 * `agentFactory` instead.
 */
export function basicAgentFactory(request: AgentBuildRequest): Agent {
  if (!request.appConfig) {
    throw new ConfigError("No config.yaml was loaded, so no model is available. Run `deerflow init` or pass --config PATH.", {
      code: "config_not_found",
    });
  }
  const { model } = createChatModel(request.appConfig, request.runtimeConfig.model_name ?? null, {
    // Thinking on is the default: only an explicit "off" is passed, so models
    // without supports_thinking are downgraded silently (DeerFlow's rule).
    thinkingEnabled: request.runtimeConfig.thinking_enabled ? undefined : false,
  });
  return createAgent({
    model,
    systemPrompt: BASIC_AGENT_PROMPT,
    checkpointer: request.checkpointer,
    name: request.runtimeConfig.agent_name ?? "lead_agent",
  });
}
