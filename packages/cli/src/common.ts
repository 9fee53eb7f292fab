import path from "node:path";
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { readEnv, resolveConfigPath } from "@deerflow-ts/harness/config";
import { DeerFlowError } from "@deerflow-ts/harness/errors";

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  config: { type: "string" },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** Help lines of {@link COMMON_OPTIONS}. */
export const COMMON_HELP = `  --config PATH      config.yaml to use (default: DEER_FLOW_CONFIG_PATH, ./config.yaml, ../config.yaml)
  --data-dir PATH    where SQLite, threads and memory live (default: DEER_FLOW_HOME, else
                     .deer-flow/ beside the config.yaml found, else in the working directory)
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

/**
 * Resolve `--config` and `--data-dir` against the working directory. The data
 * dir defaults to `DEER_FLOW_HOME`, else `.deer-flow/` beside the config.yaml
 * the search finds (so a command run from a subdirectory of the project, where
 * the search finds `../config.yaml`, sees the same threads), else `.deer-flow/`
 * in the working directory.
 */
export function commonOptions(values: { config?: string; "data-dir"?: string }, cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): CommonOptions {
  const configPath = values.config ? path.resolve(cwd, values.config) : undefined;
  return { configPath, dataDir: defaultDataDir(values["data-dir"], configPath, cwd, env), cwd };
}

function defaultDataDir(given: string | undefined, configPath: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  if (given) return path.resolve(cwd, given);
  const home = readEnv("DEER_FLOW_HOME", env);
  if (home) return path.resolve(cwd, home);
  try {
    return path.join(path.dirname(resolveConfigPath({ path: configPath, cwd, env })), ".deer-flow");
  } catch {
    // no config found: the command reports that itself; a data dir is still needed for messages and doctor
    return path.resolve(cwd, ".deer-flow");
  }
}

/** A failure that knows its fix: printed as its message, then `Fix: …`. */
export class FixedError extends Error {
  constructor(
    message: string,
    readonly fix: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const FIXES: Record<string, string> = {
  config_not_found: "Run `deerflow init` to create config.yaml, or pass --config PATH.",
  config_env_missing: "Add the variable to .env (next to config.yaml) or export it, then retry. `deerflow doctor` lists every missing variable.",
  model_unknown: "Pass one of the configured models with --model, or add the model under `models:` in config.yaml.",
  model_none_configured: "Add a model under `models:` in config.yaml (or run `deerflow init`).",
  model_auth: "Check the API key in .env (`deerflow doctor` tests it).",
  model_connection: "Is the model server reachable? Check base_url in config.yaml and your network (`deerflow doctor`).",
  model_timeout: "The model did not answer in time. Check base_url and your network (`deerflow doctor`).",
  postgres_unreachable:
    "Check that PostgreSQL runs and accepts connections at that address, and the user, password and database name in database.postgres_url (shown with its password masked; `deerflow doctor` checks it).",
  postgres_migration_failed:
    "Check that the database user in database.postgres_url may create tables (in database.postgres_schema when set); `deerflow doctor` lists the migrations applied so far.",
  stream_bridge_unavailable:
    "Check that Redis runs and accepts connections there, and stream_bridge.redis_url (or DEER_FLOW_STREAM_BRIDGE_REDIS_URL) with its password (`deerflow doctor` checks it).",
  stream_bridge_failed: "Check that Redis runs and stream_bridge.redis_url (`deerflow doctor` checks it), or set stream_bridge.type: memory for one process.",
  auth_jwt_secret_missing:
    "Run `deerflow init --auth` (it writes DEER_FLOW_JWT_SECRET to .env), or put DEER_FLOW_JWT_SECRET=<at least 32 random characters> in .env and `jwt_secret: $DEER_FLOW_JWT_SECRET` under auth: in config.yaml.",
};

/** The fix `describeError` prints for a typed error, if it knows one. */
function fixOf(err: DeerFlowError): string | undefined {
  return FIXES[err.code] ?? (err.code.startsWith("config_") ? configFix(err) : undefined);
}

/**
 * The fix of a config error names the file it is in (config.yaml, or
 * extensions_config.json for MCP servers and skills) and, when known, the line
 * or the keys to change.
 */
function configFix(err: DeerFlowError): string {
  const d = err.details as { file?: unknown; line?: unknown; column?: unknown; issues?: Array<{ keyPath?: unknown }> };
  const file = typeof d.file === "string" && !d.file.startsWith("<") ? d.file.replace(/ \(extensions:\)$/, "") : "config.yaml";
  const where = typeof d.line === "number" ? ` at line ${d.line}${typeof d.column === "number" ? `, column ${d.column}` : ""}` : "";
  const keys = (d.issues ?? []).map((i) => i.keyPath).filter((k): k is string => typeof k === "string" && k !== "");
  const what = err.code === "config_syntax" ? `the syntax of ${file}${where}` : keys.length ? `${keys.slice(0, 3).join(", ")}${keys.length > 3 ? ", …" : ""} in ${file}` : `${file}${where}`;
  return `Fix ${what} as described above (\`deerflow doctor\` checks it).`;
}

/** Whether {@link describeError} prints a `Fix:` line for this typed error. */
export function hasKnownFix(err: DeerFlowError): boolean {
  return fixOf(err) !== undefined;
}

/** A readable failure message: what went wrong, and the fix when we know one. */
export function describeError(err: unknown): string {
  if (err instanceof FixedError) return `${err.message}\nFix: ${err.fix}`;
  if (err instanceof DeerFlowError) {
    const fix = fixOf(err);
    return fix ? `${err.message}\nFix: ${fix}` : err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}
