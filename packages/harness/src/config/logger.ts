/** Where the config system reports warnings (outdated version, fallbacks…). Injectable for tests. */
export interface ConfigLogger {
  warn(message: string): void;
  info?(message: string): void;
}

/** The default logger: `console.warn` with a `[deerflow:config]` prefix. */
export const consoleConfigLogger: ConfigLogger = {
  warn(message: string) {
    console.warn(`[deerflow:config] ${message}`);
  },
};

/** A logger that drops everything. */
export const silentConfigLogger: ConfigLogger = { warn() {} };
