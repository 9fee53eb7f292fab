import path from "node:path";
import { pathToFileURL } from "node:url";
import { readEnv } from "@deerflow-ts/harness/config";
import type { AgentFactory } from "@deerflow-ts/harness/deerflow-runtime";

/**
 * Environment variable naming a module that exports `agentFactory` (or a
 * default export) to use instead of the built-in agent. Meant for tests and
 * embedding: it lets the CLI run a scripted agent without any model server.
 */
export const AGENT_MODULE_ENV = "DEER_FLOW_AGENT_MODULE";

/** The agent factory the CLI should use, or undefined for the client's default. */
export async function resolveAgentFactory(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<AgentFactory | undefined> {
  const modulePath = readEnv(AGENT_MODULE_ENV, env);
  if (!modulePath) return undefined;
  const mod = (await import(pathToFileURL(path.resolve(cwd, modulePath)).href)) as { agentFactory?: unknown; default?: unknown };
  const factory = mod.agentFactory ?? mod.default;
  if (typeof factory !== "function") {
    throw new Error(`${AGENT_MODULE_ENV}=${modulePath} must export a function named agentFactory (or a default export).`);
  }
  return factory as AgentFactory;
}
