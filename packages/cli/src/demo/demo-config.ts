import { DEFAULT_TOOL_ENTRIES } from "@deerflow-ts/harness/agents";
import { appConfigFromValue } from "@deerflow-ts/harness/config";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { DEMO_CONFIGURE_COMMAND, demoStep, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";

/** Display name of the demo model (shown in the model picker). */
export const DEMO_MODEL_DISPLAY_NAME = "Demo (scripted test model, not an LLM)";

/**
 * The config of demo mode: one model pointing at the scripted demo server,
 * the default sandbox tools (the demo writes a file with `write_file`) and
 * no `sandbox.use`, so bubblewrap is used when it works here. Built as data and validated as config.yaml
 * would be, so a demo server never loads the YAML parser.
 */
export function demoConfigValue(llmBaseUrl: string): Record<string, unknown> {
  return {
    config_version: 34,
    models: [{ name: "demo", display_name: DEMO_MODEL_DISPLAY_NAME, use: "openai-compatible", model: "scripted", base_url: llmBaseUrl, api_key: "demo" }],
    tool_groups: [{ name: "file:read" }, { name: "file:write" }, { name: "bash" }],
    tools: DEFAULT_TOOL_ENTRIES.map((e) => ({ ...e })),
  };
}

/** A running demo: the scripted demo model server and the config that points at it. */
export interface DemoModel {
  server: ScriptedLLMServer;
  config: AppConfig;
  /** The command that configures a real model. */
  configureCommand: string;
  close(): Promise<void>;
}

/** Start the scripted demo model (127.0.0.1, any free port) and build the demo config. */
export async function startDemoModel(): Promise<DemoModel> {
  const server = await startScriptedLLMServer({ script: [demoStep], onExhausted: "repeat-last" });
  const { config } = appConfigFromValue(demoConfigValue(`${server.url}/v1`));
  return { server, config, configureCommand: DEMO_CONFIGURE_COMMAND, close: () => server.close() };
}
