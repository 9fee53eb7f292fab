import { appConfigFromText } from "../../src/config";
import type { AppConfig } from "../../src/config";

/** An AppConfig with the given models section (YAML text), no env needed. */
export function configWithModels(modelsYaml: string, env: Record<string, string> = {}): AppConfig {
  return appConfigFromText(`config_version: 34\nmodels:\n${modelsYaml}`, { env }).config;
}
