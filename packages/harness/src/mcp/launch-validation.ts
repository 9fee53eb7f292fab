import { ValidationError } from "../errors";

/** Env var extending the stdio command allowlist (comma-separated executable names). */
export const MCP_STDIO_ALLOWLIST_ENV = "DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST";
/** Commands an API-managed stdio server may run by default: the package launchers. */
export const DEFAULT_MCP_STDIO_COMMANDS = ["npx", "uvx"] as const;

const SHELL_METACHARS = /[;|&`$<>\n\r]/;

/** Flags that make a launcher or interpreter evaluate a string instead of running a package. */
const EXEC_FLAGS = new Set(["-c", "--call", "-e", "--eval", "--print", "--shell", "--node-arg", "--node-options"]);
/** `-p` evaluates on node (`--print`) but selects a package/python for npx/uvx, so it is only denied outside the launchers. */
const EXEC_FLAGS_OUTSIDE_LAUNCHERS = new Set(["-p"]);
const CLUSTER_LETTERS = new Set([...EXEC_FLAGS, ...EXEC_FLAGS_OUTSIDE_LAUNCHERS].filter((f) => /^-[a-z]$/i.test(f)).map((f) => f[1]));

/** Environment variables that run code in a process at start-up (the same bypass as an exec flag). */
export const CODE_INJECTING_ENV = new Set([
  "BASH_ENV",
  "DYLD_INSERT_LIBRARIES",
  "ENV",
  "LD_AUDIT",
  "LD_PRELOAD",
  "NODE_OPTIONS",
  "PERL5OPT",
  "PYTHONHOME",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "RUBYOPT",
]);

// npm options that take no value: everything else is assumed to take one, so an unknown option can never hide `-c`.
const NPX_BOOLEANS = new Set(
  (
    "--yes -y --no --quiet -q --silent -s --force -f --prefer-offline --prefer-online --offline --ignore-scripts --legacy-peer-deps " +
    "--global -g --json --parseable --long -l --verbose -d -dd -ddd --dry-run --no-audit --audit --fund --no-fund --progress --no-progress " +
    "--strict-ssl --foreground-scripts --include-workspace-root --workspaces -ws --save -S --save-dev -D --save-exact -E --version -v --help -h"
  ).split(" "),
);
// uv options that take a value: everything else is assumed boolean (uv has no evaluate-a-string option to hide).
const UVX_VALUES = new Set(
  (
    "--from --with --with-editable --with-requirements --python -p --index --index-url -i --extra-index-url --default-index --find-links -f " +
    "--directory --project --config-file --cache-dir --constraints -c --overrides --build-constraints --env-file --prerelease --resolution " +
    "--index-strategy --keyring-provider --link-mode --exclude-newer --python-platform --color -C --config-setting -w -b -P --upgrade-package " +
    "--reinstall-package --refresh-package --no-binary-package --no-build-package --allow-insecure-host"
  ).split(" "),
);

interface LauncherGrammar {
  exec: Set<string>;
  takesValue(flag: string): boolean;
}

const LAUNCHERS: Record<string, LauncherGrammar> = {
  npx: { exec: EXEC_FLAGS, takesValue: (f) => !NPX_BOOLEANS.has(f) && !f.startsWith("--no-") },
  // uv spells -c/-p as --constraints/--python: only the long exec spellings stay as a tripwire.
  uvx: { exec: new Set([...EXEC_FLAGS].filter((f) => f.startsWith("--"))), takesValue: (f) => UVX_VALUES.has(f) },
};

/** The leading args a launcher parses as its own options (up to `--` or the package name). */
function launcherOptions(args: readonly string[], grammar: LauncherGrammar): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i].trim();
    if (token === "--" || token === "-" || !token.startsWith("-")) break;
    out.push(token);
    if (!token.includes("=") && grammar.takesValue(token)) i++;
  }
  return out;
}

/**
 * The flag in `args` that would make `command` evaluate arbitrary code, or
 * undefined. For the package launchers only their own option region is
 * screened (everything after the package name belongs to the server, where
 * `-c` usually means "config"); any other command is screened whole,
 * including clustered short options such as `-pe`.
 */
export function arbitraryExecFlag(command: string, args: readonly string[]): string | undefined {
  const grammar = LAUNCHERS[command.toLowerCase()];
  if (grammar) {
    for (const token of launcherOptions(args, grammar)) {
      const raw = token.split("=", 1)[0];
      const flag = raw.startsWith("--") ? raw.toLowerCase() : raw;
      if (grammar.exec.has(flag)) return flag;
    }
    return undefined;
  }
  for (const arg of args) {
    const flag = arg.split("=", 1)[0].trim().toLowerCase();
    if (EXEC_FLAGS.has(flag) || EXEC_FLAGS_OUTSIDE_LAUNCHERS.has(flag)) return flag;
    if (!flag.startsWith("-") || flag.startsWith("--")) continue;
    for (const letter of flag.slice(1)) if (CLUSTER_LETTERS.has(letter)) return `-${letter}`;
  }
  return undefined;
}

/** The allowed stdio commands: npx, uvx, plus `DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST`. */
export function allowedStdioCommands(env: Record<string, string | undefined> = process.env): Set<string> {
  const extra = (env[MCP_STDIO_ALLOWLIST_ENV] ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  return new Set([...DEFAULT_MCP_STDIO_COMMANDS, ...extra]);
}

/** The parts of a server entry launch validation reads. */
export interface StdioLaunchSpec {
  type?: string | null;
  command?: string | null;
  args?: readonly string[];
  env?: Record<string, string>;
}

/**
 * Validate stdio servers submitted over the HTTP API before they are saved
 * (a file edited by the operator is trusted as-is). Rejects a command that
 * is not a single allowlisted executable name, launcher/interpreter flags
 * that evaluate code, and code-injecting environment variables. Messages
 * name the flag, never echo its value. Throws {@link ValidationError}
 * (`mcp_stdio_rejected`).
 */
export function validateStdioLaunch(name: string, server: StdioLaunchSpec, env: Record<string, string | undefined> = process.env): void {
  if ((server.type || "stdio").toLowerCase() !== "stdio") return;
  const reject = (message: string) => {
    throw new ValidationError(message, { code: "mcp_stdio_rejected", details: { server: name } });
  };
  const command = server.command ?? "";
  if (!command.trim()) reject(`MCP server '${name}' with stdio transport requires a command.`);
  const bare = command.trim();
  if (bare !== command || /[/\\\s]/.test(bare) || SHELL_METACHARS.test(bare)) {
    reject(`MCP server '${name}' command must be a single executable name; put parameters in args instead.`);
  }
  const allowed = allowedStdioCommands(env);
  if (!allowed.has(bare)) {
    reject(`MCP server '${name}' uses disallowed stdio command '${bare}'. Allowed commands: ${[...allowed].sort().join(", ")}. Configure ${MCP_STDIO_ALLOWLIST_ENV} to extend this list.`);
  }
  const flag = arbitraryExecFlag(bare, server.args ?? []);
  if (flag) reject(`MCP server '${name}' passes '${flag}' to '${bare}', which would run arbitrary code. Point the server at a package or module instead.`);
  for (const key of Object.keys(server.env ?? {})) {
    if (CODE_INJECTING_ENV.has(key.trim().toUpperCase())) reject(`MCP server '${name}' sets environment variable '${key}', which would run arbitrary code at process startup.`);
  }
}
