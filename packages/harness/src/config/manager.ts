import { statSync } from "node:fs";
import { ConfigError, errorMessage } from "../errors";
import { loadAppConfig } from "./loader";
import type { LoadAppConfigOptions } from "./loader";
import { consoleConfigLogger } from "./logger";
import type { ConfigLogger } from "./logger";
import { resolveConfigPath } from "./paths";
import type { AppConfig, LoadedAppConfig } from "./types";

function signatureOf(file: string | null): string {
  if (!file) return "-";
  try {
    const st = statSync(file);
    return `${file}|${st.mtimeMs}|${st.size}`;
  } catch {
    return `${file}|missing`;
  }
}

/**
 * A cached, hot-reloading config. {@link get} re-reads config.yaml (and
 * extensions_config.json) when the resolved path or a file's (mtime, size)
 * changes. A broken edit keeps the last good config and is reported through
 * {@link lastError} and the logger; the first load throws.
 */
export class ConfigManager {
  private loaded: LoadedAppConfig | null = null;
  private signature = "";
  private override: AppConfig | null = null;
  private failedSignature = "";
  /** The error of the last failed reload (null after a good load). */
  lastError: ConfigError | null = null;
  private readonly options: LoadAppConfigOptions;
  private readonly logger: ConfigLogger;

  constructor(options: LoadAppConfigOptions = {}) {
    this.options = options;
    this.logger = options.logger ?? consoleConfigLogger;
  }

  private currentSignature(): string {
    let file: string | null;
    try {
      file = resolveConfigPath({ path: this.options.path, cwd: this.options.cwd, env: this.options.env });
    } catch {
      file = null;
    }
    return `${signatureOf(file)}#${signatureOf(this.loaded?.extensionsPath ?? null)}`;
  }

  /** The current config, reloaded first when the files changed. */
  get(): AppConfig {
    if (this.override) return this.override;
    return this.getLoaded().config;
  }

  /** Like {@link get} but with path, warnings and env files. */
  getLoaded(): LoadedAppConfig {
    const sig = this.currentSignature();
    if (this.loaded && sig === this.signature) return this.loaded;
    if (this.loaded && sig === this.failedSignature) return this.loaded;
    return this.load(sig);
  }

  /** Force a reload now (throws on the first load; later failures keep the last good config). */
  reload(): LoadedAppConfig {
    return this.load(this.currentSignature());
  }

  private load(sig: string): LoadedAppConfig {
    try {
      const loaded = loadAppConfig({ ...this.options, logger: this.logger });
      this.loaded = loaded;
      // Re-read the signature: the extensions path is known only after a load.
      this.signature = this.currentSignature();
      this.failedSignature = "";
      this.lastError = null;
      return loaded;
    } catch (err) {
      const error = err instanceof ConfigError ? err : new ConfigError(errorMessage(err), { cause: err });
      if (!this.loaded) throw error;
      this.lastError = error;
      this.failedSignature = sig;
      this.logger.warn(`Config reload failed; keeping the last good config. ${error.message}`);
      return this.loaded;
    }
  }

  /** Replace the config with a fixed one (tests, embedded clients). `null` restores file loading. */
  set(config: AppConfig | null): void {
    this.override = config;
  }

  /** Drop the cache so the next {@link get} loads from disk. */
  reset(): void {
    this.loaded = null;
    this.signature = "";
    this.failedSignature = "";
    this.lastError = null;
  }
}
