import path from "node:path";
import { ValidationError } from "../errors";
import { envReferenceName } from "../config";
import { MASKED_VALUE } from "./secret-mask";

/** The config.yaml key listing the variables an API-submitted MCP config may reference. */
export const MCP_API_ENV_ALLOWLIST_KEY = "mcp_api.allowed_env_vars";

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Every string value of a JSON value with its key path (`env.TOKEN`, `args[2]`, `oauth.client_secret`). */
function* strings(value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === "string") yield [at, value];
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], `${at}[${i}]`);
  else if (isObj(value)) for (const [k, v] of Object.entries(value)) yield* strings(v, at ? `${at}.${k}` : k);
}

function valueAt(root: unknown, at: string): unknown {
  let cur: unknown = root;
  for (const part of at.match(/[^.[\]]+/g) ?? []) {
    if (Array.isArray(cur) && /^\d+$/.test(part)) cur = cur[Number(part)];
    else if (isObj(cur)) cur = cur[part];
    else return undefined;
  }
  return cur;
}

/**
 * Where the entry's values go: the transport, the process it starts (its
 * command, args and environment — `npm_config_registry` or `PATH` decide
 * what code `npx pkg` runs with the stored token), the URL it sends them to,
 * and the OAuth token endpoint the client secret is posted to. A secret the
 * file already holds may only stay with an entry whose destination did not change.
 */
function destination(entry: Record<string, unknown> | undefined): string {
  if (!entry) return "";
  const type = String(entry.type ?? entry.transport ?? "stdio").toLowerCase();
  const env = isObj(entry.env) ? Object.entries(entry.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
  const tokenUrl = isObj(entry.oauth) ? (entry.oauth.token_url ?? null) : null;
  return JSON.stringify([type, entry.command ?? null, Array.isArray(entry.args) ? entry.args : [], entry.url ?? null, type === "stdio" ? env : [], tokenUrl]);
}

/**
 * The checks an MCP server entry submitted through the HTTP API gets on top
 * of stdio launch validation, because whatever the API writes to
 * extensions_config.json is later read as if the operator had written it:
 *
 * - a whole-value `$VAR` / `${VAR}` reference anywhere in the entry (env,
 *   headers, url, args, oauth) is refused unless `VAR` is listed in
 *   `mcp_api.allowed_env_vars` in config.yaml — otherwise a client could have
 *   any variable of the server's environment resolved and sent to a URL or
 *   process of its choice;
 * - `sandbox: false` (run the server on the host) is refused;
 * - values carried over from the stored entry (a `$VAR` the operator wrote,
 *   `sandbox: false`, or a secret sent back as `***`) are accepted only while
 *   the entry's destination (type, command, args, a stdio server's env, url,
 *   OAuth token_url) is unchanged, so an edit cannot move a stored secret to
 *   a new process or URL.
 *
 * - with `dataDir`, a `command` or argument naming a path inside the data dir
 *   is refused up front (uploads and thread files are written by the agent
 *   and by any client of the API; the launch refuses them too).
 *
 * Messages name the server, the key and the variable, never a value.
 * @throws ValidationError `mcp_env_ref_refused`, `mcp_sandbox_opt_out_refused`, `mcp_path_refused` or `mcp_masked_value`
 */
export function guardApiSubmittedEntry(
  name: string,
  entry: Record<string, unknown>,
  context: { incoming: Record<string, unknown>; stored: Record<string, unknown> | undefined },
  allowedEnvVars: readonly string[],
  dataDir?: string,
): void {
  if (dataDir) {
    const root = path.resolve(dataDir);
    const launch = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter((v): v is string => typeof v === "string");
    for (const [i, value] of launch.entries()) {
      const p = value.startsWith("/") ? value : /^-[^=]*=\//.test(value) ? value.slice(value.indexOf("=") + 1) : undefined;
      if (!p) continue;
      const rel = path.relative(root, path.resolve(p));
      if (rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))) {
        const key = i === 0 && typeof entry.command === "string" ? "command" : `args[${typeof entry.command === "string" ? i - 1 : i}]`;
        throw new ValidationError(
          `MCP server '${name}': ${key} names a path inside the data dir, where uploads and thread files are written; a server can only be launched from a path outside it.`,
          { code: "mcp_path_refused", details: { server: name, key } },
        );
      }
    }
  }
  const allowed = new Set(allowedEnvVars);
  const stored = context.stored;
  const sameDestination = !!stored && destination(stored) === destination(entry);
  const listed = allowed.size ? [...allowed].sort().join(", ") : "none";
  for (const [at, value] of strings(entry, "")) {
    const variable = envReferenceName(value);
    if (!variable || allowed.has(variable)) continue;
    if (sameDestination && valueAt(stored, at) === value) continue;
    throw new ValidationError(
      `MCP server '${name}': ${at} refers to the environment variable ${variable}. A configuration submitted through the API may only reference variables listed in ${MCP_API_ENV_ALLOWLIST_KEY} in config.yaml (currently: ${listed}); put the value itself, or have the operator add ${variable} to that list.`,
      { code: "mcp_env_ref_refused", details: { server: name, key: at, variable } },
    );
  }
  if (entry.sandbox === false && !(sameDestination && stored?.sandbox === false)) {
    throw new ValidationError(
      `MCP server '${name}': "sandbox": false (run the server on the host, outside its bubblewrap sandbox) cannot be set through the API; the operator can set it by editing extensions_config.json.`,
      { code: "mcp_sandbox_opt_out_refused", details: { server: name } },
    );
  }
  if (stored && !sameDestination) {
    for (const [at, value] of strings(context.incoming, "")) {
      if (value !== MASKED_VALUE && !(at === "url" || at.startsWith("args[")) ) continue;
      if (!value.includes(MASKED_VALUE)) continue;
      throw new ValidationError(
        `MCP server '${name}': ${at} keeps a stored secret ('***') while the server's command, args, env, url, OAuth token_url or type changes; enter the value again.`,
        { code: "mcp_masked_value", details: { server: name, key: at } },
      );
    }
    // OAuth secrets sent as null are kept from the stored entry by the merge: the same rule applies to them.
    const oauthIn = context.incoming.oauth;
    if (isObj(oauthIn) && isObj(stored.oauth)) {
      for (const k of ["client_secret", "refresh_token"]) {
        if (oauthIn[k] == null && stored.oauth[k] != null) {
          throw new ValidationError(`MCP server '${name}': oauth.${k} keeps the stored secret while the server's url, OAuth token_url or type changes; enter it again.`, {
            code: "mcp_masked_value",
            details: { server: name, key: `oauth.${k}` },
          });
        }
      }
    }
  }
}
