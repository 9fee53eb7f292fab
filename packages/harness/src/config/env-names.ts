/**
 * The environment variables DeerFlow-TS reads. DeerFlow's own names are kept
 * exactly as DeerFlow spells them (`DEER_FLOW_HOME`, `DEERFLOW_ENABLE_TEST_SEED`…);
 * this project's own names use DeerFlow's main prefix `DEER_FLOW_`, and their
 * earlier `DEERFLOW_` spellings stay accepted as aliases. docs/configuration.md
 * lists the same table (a test keeps the two in step).
 */
import { ConfigError } from "../errors";

/** One environment variable: its name, the older spellings still read, and what it does. */
export interface EnvVarInfo {
  name: string;
  /** Other spellings read when `name` is unset (first set one wins). */
  aliases: readonly string[];
  /** `deerflow`: DeerFlow's name (kept as it spells it); `standard`: a convention other tools share; `ours`: this project's. */
  origin: "deerflow" | "standard" | "ours";
  /** Who reads it. */
  readBy: string;
  what: string;
}

/** Every environment variable read outside tests. */
export const ENV_VARS: readonly EnvVarInfo[] = [
  { name: "DEER_FLOW_HOME", aliases: [], origin: "deerflow", readBy: "harness", what: "Runtime home: thread data, databases, memory (default `.deer-flow`)." },
  { name: "DEER_FLOW_CONFIG_PATH", aliases: [], origin: "deerflow", readBy: "config loader", what: "The config.yaml to load (a missing file is an error)." },
  { name: "DEER_FLOW_EXTENSIONS_CONFIG_PATH", aliases: [], origin: "deerflow", readBy: "config loader", what: "The extensions_config.json to load (a missing file is an error)." },
  { name: "DEER_FLOW_PROJECT_ROOT", aliases: [], origin: "deerflow", readBy: "config loader, skills", what: "Directory searched for config.yaml and `skills/` before the working directory." },
  { name: "DEER_FLOW_SKILLS_PATH", aliases: [], origin: "deerflow", readBy: "skills", what: "The skills directory when `skills.path` is unset." },
  { name: "DEER_FLOW_AUTH_DISABLED", aliases: [], origin: "deerflow", readBy: "server, cli", what: "`1` turns sign-in off whatever `auth.enabled` says (ignored when DEER_FLOW_ENV or ENVIRONMENT is production)." },
  { name: "DEER_FLOW_ENV", aliases: [], origin: "deerflow", readBy: "server", what: "`prod`/`production` (also read from `ENVIRONMENT`): DEER_FLOW_AUTH_DISABLED is ignored." },
  { name: "DEER_FLOW_STREAM_BRIDGE_REDIS_URL", aliases: [], origin: "deerflow", readBy: "runs", what: "A Redis URL for the stream bridge (implies `stream_bridge.type: redis`)." },
  { name: "DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST", aliases: [], origin: "deerflow", readBy: "server (MCP API)", what: "Comma-separated commands, beyond npx and uvx, that a stdio MCP server submitted through the API may run." },
  { name: "DEERFLOW_WRITE_FILE_MAX_BYTES", aliases: [], origin: "deerflow", readBy: "write_file tool", what: "Largest content `write_file` accepts (≤ 0 disables the cap; default 80 KiB)." },
  { name: "DEERFLOW_ENABLE_TEST_SEED", aliases: [], origin: "deerflow", readBy: "server", what: "`1` mounts the test-only `POST /api/test-only/seed-runs` route (end-to-end tests; never in production)." },
  { name: "DEERFLOW_REPLAY_FIXTURE", aliases: [], origin: "deerflow", readBy: "replay model", what: "Fixture file of a `use: replay` model entry that sets no `fixture:`." },
  { name: "DEERFLOW_RECORD_OUT", aliases: [], origin: "deerflow", readBy: "model factory", what: "JSONL file every model call is appended to as a replay fixture turn (recording a scenario)." },
  { name: "DEER_FLOW_JWT_SECRET", aliases: [], origin: "ours", readBy: "config.yaml (`auth.jwt_secret: $DEER_FLOW_JWT_SECRET`)", what: "Session-cookie secret that `deerflow init` writes to .env." },
  { name: "DEER_FLOW_AUTH_ALLOW_INSECURE_PERSISTENT_COOKIE", aliases: [], origin: "deerflow", readBy: "server", what: "`1` keeps the remember-me cookie over plain HTTP to a non-loopback host." },
  { name: "DEER_FLOW_SKIP_WEB_BUILD", aliases: ["DEERFLOW_SKIP_WEB_BUILD"], origin: "ours", readBy: "cli serve", what: "`1` = `serve --no-web-build`." },
  { name: "DEER_FLOW_AGENT_MODULE", aliases: ["DEERFLOW_AGENT_MODULE"], origin: "ours", readBy: "cli", what: "A module whose agent factory replaces the lead agent (tests, embedding)." },
  { name: "DEER_FLOW_SSE_MAX_BACKLOG_BYTES", aliases: ["DEERFLOW_SSE_MAX_BACKLOG_BYTES"], origin: "ours", readBy: "server", what: "Bytes queued for one slow SSE client before it is cut off (≥ 1024)." },
  { name: "DEER_FLOW_SQLITE_INLINE_WRITES", aliases: ["DEERFLOW_SQLITE_INLINE_WRITES"], origin: "ours", readBy: "harness (SQLite)", what: "Set: write SQLite rows on the calling thread instead of the writer thread." },
  { name: "DEER_FLOW_SQLITE_INLINE_CHECKPOINT", aliases: ["DEERFLOW_SQLITE_INLINE_CHECKPOINT"], origin: "ours", readBy: "harness (SQLite)", what: "Set: write checkpoints inline instead of through the writer thread." },
  { name: "PORT", aliases: [], origin: "standard", readBy: "cli serve", what: "Port when `--port` is not given (default 2026)." },
  { name: "HOST", aliases: [], origin: "standard", readBy: "cli serve", what: "Interface when `--host` is not given (default 127.0.0.1)." },
  { name: "OPENAI_BASE_URL", aliases: [], origin: "standard", readBy: "models (`use: openai`)", what: "Base URL of the openai provider when the model entry sets no `base_url` (as the OpenAI SDK reads it)." },
  { name: "OPENAI_API_KEY", aliases: [], origin: "standard", readBy: "models", what: "API key of `use: openai` when the entry sets no `api_key` (likewise ANTHROPIC_API_KEY, DEEPSEEK_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY…)." },
  { name: "PROVISIONER_API_KEY", aliases: [], origin: "deerflow", readBy: "cli provisioner", what: "The key every `/api/sandboxes` call of `deerflow provisioner` must send as `X-API-Key` (required, at least 16 characters)." },
  { name: "DEER_FLOW_PROVISIONER_TOKEN_SECRET", aliases: [], origin: "ours", readBy: "cli provisioner", what: "Secret the per-sandbox tokens are derived from; keeps them valid across provisioner restarts (random per start when unset)." },
  { name: "SANDBOX_IMAGE", aliases: [], origin: "deerflow", readBy: "cli provisioner", what: "Image of the provisioner's sandboxes when `--image` is not given (else `sandbox.image`)." },
  { name: "KUBECONFIG_PATH", aliases: [], origin: "deerflow", readBy: "cli provisioner", what: "Kubeconfig of the Kubernetes backend when `--kubeconfig` is not given (else `KUBECONFIG`, `~/.kube/config`, in-cluster)." },
];

const BY_NAME = new Map(ENV_VARS.map((v) => [v.name, v]));

/**
 * The value of an environment variable by its current name, falling back to
 * its older spellings (see {@link ENV_VARS}). Empty strings count as unset.
 */
export function readEnv(name: string, env: Record<string, string | undefined> = process.env): string | undefined {
  const direct = env[name];
  if (direct !== undefined && direct !== "") return direct;
  for (const alias of BY_NAME.get(name)?.aliases ?? []) {
    const v = env[alias];
    if (v !== undefined && v !== "") return v;
  }
  return undefined;
}

/**
 * `serve`'s listen address from `PORT` / `HOST` (used when `--port` / `--host`
 * are not given). An invalid `PORT` is an error naming the variable.
 */
export function listenAddressFromEnv(env: Record<string, string | undefined> = process.env): { port?: number; host?: string } {
  const out: { port?: number; host?: string } = {};
  const port = env.PORT?.trim();
  if (port) {
    const n = Number(port);
    if (!/^\d+$/.test(port) || n > 65535) {
      throw new ConfigError(`The PORT environment variable must be an integer 0-65535, got '${port}' (unset it or pass --port).`, { code: "env_invalid", details: { variable: "PORT" } });
    }
    out.port = n;
  }
  const host = env.HOST?.trim();
  if (host) out.host = host;
  return out;
}
