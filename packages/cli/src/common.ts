import path from "node:path";
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { DeerFlowError } from "../../harness/src/errors";

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  config: { type: "string" },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** Help lines of {@link COMMON_OPTIONS}. */
export const COMMON_HELP = `  --config PATH      config.yaml to use (default: DEER_FLOW_CONFIG_PATH, ./config.yaml, ../config.yaml)
  --data-dir PATH    where SQLite, threads and memory live (default: .deer-flow/ in the working directory)
  -h, --help         show this help`;

/** A usage error (bad flag, missing argument): printed with the command's help hint, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command: string) {
    super(message);
  }
}

/** Parse a command's argv with node:util parseArgs; unknown flags become a {@link UsageError}. */
export function parseCommand<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  argv: string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, "."), command);
  }
}

/** Resolved common options. */
export interface CommonOptions {
  configPath?: string;
  dataDir: string;
  cwd: string;
}

/** Resolve `--config` and `--data-dir` against the working directory. */
export function commonOptions(values: { config?: string; "data-dir"?: string }, cwd = process.cwd()): CommonOptions {
  return {
    configPath: values.config ? path.resolve(cwd, values.config) : undefined,
    dataDir: path.resolve(cwd, values["data-dir"] ?? ".deer-flow"),
    cwd,
  };
}

const FIXES: Record<string, string> = {
  config_not_found: "Run `deerflow init` to create config.yaml, or pass --config PATH.",
  config_env_missing: "Add the variable to .env (next to config.yaml) or export it, then retry. `deerflow doctor` lists every missing variable.",
  model_none_configured: "Add a model under `models:` in config.yaml (or run `deerflow init`).",
  model_auth: "Check the API key in .env (`deerflow doctor` tests it).",
  model_connection: "Is the model server reachable? Check base_url in config.yaml and your network (`deerflow doctor`).",
  model_timeout: "The model did not answer in time. Check base_url and your network (`deerflow doctor`).",
};

/** A readable failure message: what went wrong, and the fix when we know one. */
export function describeError(err: unknown): string {
  if (err instanceof DeerFlowError) {
    const fix = FIXES[err.code] ?? (err.code.startsWith("config_") ? "Fix config.yaml as described above (`deerflow doctor` checks it)." : undefined);
    return fix ? `${err.message}\nFix: ${fix}` : err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}
