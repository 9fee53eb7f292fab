/**
 * What the observability parts read from `config.yaml`: `log_level`,
 * DeerFlow's `logging.enhance` and `metrics.enabled`.
 */

/** pino's level names. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

/** `text`: readable lines; `json`: one JSON object per line. */
export type LogFormat = "text" | "json";

/** The observability settings of one config. */
export interface ObservabilitySettings {
  level: LogLevel;
  format: LogFormat;
  metricsEnabled: boolean;
}

/** The config keys read (any config object; missing keys take the defaults). */
export interface ObservabilityConfig {
  log_level?: string | null;
  logging?: { enhance?: { enabled?: boolean | null; format?: string | null } | null } | null;
  metrics?: { enabled?: boolean | null } | null;
}

/** `log_level` (DeerFlow's Python names) → pino's: `warning` is `warn`, `critical` is `fatal`. */
const LEVELS: Record<string, LogLevel> = { debug: "debug", info: "info", warning: "warn", warn: "warn", error: "error", critical: "fatal" };

/** The settings of `config` (defaults: `info`, text, metrics off). */
export function observabilitySettings(config: ObservabilityConfig | null | undefined): ObservabilitySettings {
  const level = LEVELS[String(config?.log_level ?? "info").toLowerCase()] ?? "info";
  const enhance = config?.logging?.enhance;
  const format: LogFormat = enhance?.enabled === true && enhance.format === "json" ? "json" : "text";
  return { level, format, metricsEnabled: config?.metrics?.enabled === true };
}
