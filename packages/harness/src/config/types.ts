import type { AppConfigFile } from "./app-config-schema";
import type { ExtensionsConfig } from "./extensions-config-schema";
import type { UnknownConfigKey } from "./unknown-keys";

/**
 * The validated application config: `config.yaml` with DeerFlow defaults, plus
 * `extensions_config.json` merged into `extensions` (config.yaml's explicit
 * `extensions:` keys win).
 */
export type AppConfig = { [K in keyof AppConfigFile as K extends "extensions" ? never : K]: AppConfigFile[K] } & {
  extensions: ExtensionsConfig;
};

/** The result of loading config from disk. */
export interface LoadedAppConfig {
  config: AppConfig;
  /** Absolute path of the `config.yaml` that was read (`<inline>` for text). */
  path: string;
  /** Absolute path of `extensions_config.json`, or null when there is none. */
  extensionsPath: string | null;
  /** Non-fatal findings (outdated config_version, unset extension vars…). */
  warnings: string[];
  /** Keys of config.yaml nothing reads (typos such as `memroy:`); also among {@link warnings} as text. */
  unknownKeys: UnknownConfigKey[];
  /** `.env` files that were read. */
  envFiles: string[];
}
