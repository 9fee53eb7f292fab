export { CONFIG_VERSION, appConfigSchema } from "./app-config-schema";
export type { AppConfigFile } from "./app-config-schema";
export { modelConfigSchema, MODEL_META_KEYS } from "./model-config-schema";
export type { ModelConfig } from "./model-config-schema";
export { extensionsConfigSchema, mcpOAuthConfigSchema, mcpServerConfigSchema } from "./extensions-config-schema";
export type { ExtensionsConfig, McpOAuthConfig, McpServerConfig } from "./extensions-config-schema";
export type { AppConfig, LoadedAppConfig } from "./types";
export { resolveConfigPath, resolveExtensionsConfigPath } from "./paths";
export type { ConfigPathOptions, ExtensionsPathOptions } from "./paths";
export { envReferenceName, loadDotEnvFiles, substituteEnvVars } from "./env";
export { ENV_VARS, listenAddressFromEnv, readEnv } from "./env-names";
export type { EnvVarInfo } from "./env-names";
export type { ConfigEnv, MissingEnvVar } from "./env";
export {
  appConfigFromText,
  appConfigFromValue,
  loadAppConfig,
  loadExtensionsConfig,
  mergeExtensions,
  parseAppConfigText,
  parseExtensionsConfigText,
  unknownKeysOfConfigFile,
} from "./loader";
export type { LoadAppConfigOptions, LoadExtensionsConfigOptions } from "./loader";
export { ConfigManager } from "./manager";
export { upgradeConfig } from "./upgrade";
export type { ConfigUpgradeResult } from "./upgrade";
export { configVersionWarning } from "./version";
export { validateConfig } from "./validate";
export type { ConfigIssue } from "./validate";
export { formatKeyPath } from "./key-path";
export { closestKey, findUnknownConfigKeys } from "./unknown-keys";
export type { UnknownConfigKey } from "./unknown-keys";
export { consoleConfigLogger, silentConfigLogger } from "./logger";
export type { ConfigLogger } from "./logger";
