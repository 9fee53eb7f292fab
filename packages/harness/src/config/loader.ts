import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors";
import { appConfigSchema } from "./app-config-schema";
import type { AppConfigFile } from "./app-config-schema";
import { loadDotEnvFiles, missingEnvVarsError, substituteEnvVars } from "./env";
import type { ConfigEnv } from "./env";
import { extensionsConfigSchema } from "./extensions-config-schema";
import { formatKeyPath } from "./key-path";
import type { ExtensionsConfig } from "./extensions-config-schema";
import { consoleConfigLogger } from "./logger";
import type { ConfigLogger } from "./logger";
import { resolveConfigPath, resolveExtensionsConfigPath } from "./paths";
import type { AppConfig, LoadedAppConfig } from "./types";
import { validateConfig } from "./validate";
import { configVersionWarning } from "./version";
import { findUnknownConfigKeys } from "./unknown-keys";
import type { UnknownConfigKey } from "./unknown-keys";
import { parseJsonText, parseYamlDocument } from "./yaml-source";

/** Options of {@link loadAppConfig}. */
export interface LoadAppConfigOptions {
  /** Explicit config.yaml path. */
  path?: string | null;
  /** Explicit extensions_config.json path. */
  extensionsPath?: string | null;
  /** Working directory for lookups (default `process.cwd()`). */
  cwd?: string;
  /** Environment to read and to load `.env` into (default `process.env`). */
  env?: ConfigEnv;
  /** Load `.env` files (cwd, then next to config.yaml). Default true. */
  dotenv?: boolean;
  /** Where warnings go (default console). */
  logger?: ConfigLogger;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (cause) {
    throw new ConfigError(`Cannot read config file ${file}: ${(cause as Error).message}`, { code: "config_unreadable", cause, details: { file } });
  }
}

/**
 * Parse, env-resolve and validate config.yaml text. Missing `$VAR`s are an
 * error naming every key path (DeerFlow's rule, whichever section uses them).
 * Keys nothing reads are returned in `unknownKeys` and, as text, among the
 * warnings (first, in document order).
 */
export function parseAppConfigText(
  text: string,
  options: { file?: string; env?: ConfigEnv } = {},
): { config: AppConfigFile; warnings: string[]; unknownKeys: UnknownConfigKey[] } {
  const file = options.file ?? "<inline config>";
  const { doc, lineCounter, value: raw } = parseYamlDocument(text, file);
  if (raw !== null && (typeof raw !== "object" || Array.isArray(raw))) {
    throw new ConfigError(`Invalid configuration in ${file}: the top level must be a mapping of sections, got ${Array.isArray(raw) ? "a list" : typeof raw}.`, {
      details: { file },
    });
  }
  const unknownKeys = findUnknownConfigKeys(doc, lineCounter, file);
  return { ...checkConfigValue(raw ?? {}, file, options.env ?? process.env, unknownKeys), unknownKeys };
}

/**
 * Resolve `$VAR`s in a parsed config mapping and validate it: the config and its warnings (the unknown keys
 * found in its source, a stale `config_version`, repeated model names).
 */
function checkConfigValue(raw: unknown, file: string, env: ConfigEnv, unknownKeys: UnknownConfigKey[]): { config: AppConfigFile; warnings: string[] } {
  const { value, missing } = substituteEnvVars(raw, env);
  if (missing.length) throw missingEnvVarsError(file, missing);
  let config: AppConfigFile;
  try {
    config = validateConfig(appConfigSchema, value, file);
  } catch (err) {
    // A misspelt key is often why a required value is missing: name them with the error.
    if (!(err instanceof ConfigError) || !unknownKeys.length) throw err;
    const also = unknownKeys.map((k) => `  - ${k.message}`).join("\n");
    throw new ConfigError(`${err.message}\nUnknown keys (misspelt?):\n${also}`, { code: err.code, cause: err.cause, details: { ...(err.details ?? {}), unknownKeys } });
  }
  const warnings: string[] = unknownKeys.map((k) => k.message);
  const versionWarning = configVersionWarning(config.config_version, file);
  if (versionWarning) warnings.push(versionWarning);
  const names = new Set<string>();
  for (const m of config.models) {
    if (names.has(m.name)) warnings.push(`${file}: model name "${m.name}" is configured more than once; the first entry is used.`);
    names.add(m.name);
  }
  return { config, warnings };
}

/**
 * Parse, env-resolve and validate extensions_config.json text. As in DeerFlow,
 * an unset `$VAR` here becomes an empty string (servers are often disabled);
 * each one is reported as a warning.
 */
export function parseExtensionsConfigText(
  text: string,
  options: { file?: string; env?: ConfigEnv } = {},
): { config: ExtensionsConfig; warnings: string[] } {
  const file = options.file ?? "<inline extensions config>";
  const raw = parseJsonText(text, file);
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(`Invalid extensions config in ${file}: the top level must be a JSON object.`, { details: { file } });
  }
  const { value, missing } = substituteEnvVars(raw, options.env ?? process.env, "empty");
  const config = validateConfig(extensionsConfigSchema, value, file);
  // A disabled server is never started: its unset variables matter only once it is enabled (then its launch reports them).
  const disabled = Object.entries(config.mcpServers)
    .filter(([, server]) => !server.enabled)
    .map(([name]) => formatKeyPath(["mcpServers", name]));
  const underDisabled = (keyPath: string) => disabled.some((p) => keyPath === p || keyPath.startsWith(`${p}.`) || keyPath.startsWith(`${p}[`));
  const warnings = missing
    .filter((m) => !underDisabled(m.keyPath))
    .map((m) => `${file}: ${m.keyPath} refers to $${m.name}, which is not set; using an empty string.`);
  return { config, warnings };
}

/** Options of {@link loadExtensionsConfig}. */
export interface LoadExtensionsConfigOptions {
  path?: string | null;
  cwd?: string;
  env?: ConfigEnv;
  /** Directory of config.yaml, searched first. */
  configDir?: string | null;
}

/** Load extensions_config.json (empty config when there is none). */
export function loadExtensionsConfig(options: LoadExtensionsConfigOptions = {}): {
  config: ExtensionsConfig;
  path: string | null;
  warnings: string[];
} {
  const file = resolveExtensionsConfigPath(options);
  if (!file) return { config: extensionsConfigSchema.parse({}), path: null, warnings: [] };
  const { config, warnings } = parseExtensionsConfigText(readText(file), { file, env: options.env });
  return { config, path: file, warnings };
}

/** Merge config.yaml's inline `extensions:` over extensions_config.json (explicit keys win). */
export function mergeExtensions(fromFile: ExtensionsConfig, inline: Record<string, unknown> | null): ExtensionsConfig {
  if (!inline) return fromFile;
  return validateConfig(extensionsConfigSchema, { ...fromFile, ...inline }, "config.yaml (extensions:)");
}

/**
 * Load the application config: resolve config.yaml (see {@link resolveConfigPath}),
 * load `.env` files without overriding set variables, resolve `$VAR`s, validate,
 * merge extensions_config.json, and report warnings (also sent to the logger).
 */
export function loadAppConfig(options: LoadAppConfigOptions = {}): LoadedAppConfig {
  const env = options.env ?? process.env;
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const logger = options.logger ?? consoleConfigLogger;
  const envFiles: string[] = [];
  if (options.dotenv !== false) envFiles.push(...loadDotEnvFiles([path.join(cwd, ".env")], env));
  const file = resolveConfigPath({ path: options.path, cwd, env });
  if (options.dotenv !== false) envFiles.push(...loadDotEnvFiles([path.join(path.dirname(file), ".env")].filter((f) => !envFiles.includes(f)), env));
  const { config: fileConfig, warnings, unknownKeys } = parseAppConfigText(readText(file), { file, env });
  const ext = loadExtensionsConfig({ path: options.extensionsPath, cwd, env, configDir: path.dirname(file) });
  warnings.push(...ext.warnings);
  const { extensions: inline, ...rest } = fileConfig;
  const config: AppConfig = { ...rest, extensions: mergeExtensions(ext.config, inline) };
  for (const w of warnings) logger.warn(w);
  return { config, path: file, extensionsPath: ext.path, warnings, unknownKeys, envFiles };
}

/**
 * The unknown keys of the config.yaml that {@link resolveConfigPath} finds
 * (for commands whose loader is silent). Never throws: no file, an
 * unreadable file or invalid YAML give `[]` (the loader reports those).
 */
export function unknownKeysOfConfigFile(options: { path?: string | null; cwd?: string; env?: ConfigEnv } = {}): UnknownConfigKey[] {
  try {
    const file = resolveConfigPath(options);
    const { doc, lineCounter } = parseYamlDocument(readFileSync(file, "utf8"), file);
    return findUnknownConfigKeys(doc, lineCounter, file);
  } catch {
    return [];
  }
}

/**
 * Build an {@link AppConfig} from config data made in code (the demo's config), validated as config.yaml text
 * would be, without a YAML round trip: the YAML parser is only loaded when there is YAML to read. There is no
 * source text, so unknown keys are not reported (the zod schema still drops them).
 */
export function appConfigFromValue(
  value: Record<string, unknown>,
  options: { env?: ConfigEnv; extensions?: ExtensionsConfig; file?: string } = {},
): { config: AppConfig; warnings: string[] } {
  const { config: fileConfig, warnings } = checkConfigValue(value, options.file ?? "<inline config>", options.env ?? process.env, []);
  const { extensions: inline, ...rest } = fileConfig;
  return {
    config: { ...rest, extensions: mergeExtensions(options.extensions ?? extensionsConfigSchema.parse({}), inline) },
    warnings,
  };
}

/** Build an {@link AppConfig} from config.yaml text (tests, embedded use). No files are touched. */
export function appConfigFromText(
  text: string,
  options: { env?: ConfigEnv; extensions?: ExtensionsConfig; file?: string } = {},
): { config: AppConfig; warnings: string[] } {
  const { config: fileConfig, warnings } = parseAppConfigText(text, options);
  const { extensions: inline, ...rest } = fileConfig;
  return {
    config: { ...rest, extensions: mergeExtensions(options.extensions ?? extensionsConfigSchema.parse({}), inline) },
    warnings,
  };
}
