import { existsSync, readFileSync } from "node:fs";
import { ValidationError } from "../errors";
import { writeFileAtomicSync } from "../fs";
import { mcpServerConfigSchema } from "../config";
import { formatZodError } from "../tools";
import { isSensitiveKey, MASKED_VALUE, maskArgs, maskUrlsIn, restoreMaskedArgs, restoreMaskedUrl } from "./secret-mask";

export { MASKED_VALUE } from "./secret-mask";

/**
 * Checks a merged entry before it is written. `context` carries what the
 * client sent and the stored entry, so a check can tell a value the client
 * wrote from one carried over from the file.
 */
export type McpEntryValidator = (name: string, entry: Record<string, unknown>, context: { incoming: Record<string, unknown>; stored: Record<string, unknown> | undefined }) => void;

/** What GET/PUT `/api/mcp/config` send: DeerFlow's `McpConfigResponse`. */
export interface McpConfigResponse {
  mcp_servers: Record<string, Record<string, unknown>>;
}

const KNOWN_KEYS = new Set([
  "enabled", "type", "transport", "command", "args", "env", "url", "headers", "oauth", "description", "routing", "tools",
  "tool_name_prefix", "tool_call_timeout", "session_init_timeout", "task_toolsets", "sandbox",
]);

const isSensitive = isSensitiveKey;
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function maskExtra(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskExtra);
  if (!isObj(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSensitive(k) ? MASKED_VALUE : maskExtra(v)]));
}

/** A server entry validated and with DeerFlow's defaults, as the API shows it (unmasked). */
export function normalizeServerEntry(name: string, raw: unknown): Record<string, unknown> {
  const parsed = mcpServerConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ValidationError(`Invalid MCP server '${name}': ${formatZodError(parsed.error)}`, { code: "mcp_config_invalid", details: { server: name } });
  }
  const out = { ...(parsed.data as Record<string, unknown>) };
  delete out.transport;
  return out;
}

/**
 * Env and header values become `***`, OAuth secrets null, sensitive extra keys `***`, secret-looking args
 * (see {@link maskArgs}) and URL credentials (userinfo, query values) `***` (never sent to a browser).
 */
export function maskServerEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) {
    if ((k === "env" || k === "headers") && isObj(v)) out[k] = Object.fromEntries(Object.keys(v).map((h) => [h, MASKED_VALUE]));
    else if (k === "args" && Array.isArray(v)) out[k] = maskArgs(v.map(String));
    else if (k === "url" && typeof v === "string") out[k] = maskUrlsIn(v);
    else if (k === "oauth" && isObj(v)) out[k] = { ...v, client_secret: null, refresh_token: null };
    else if (!KNOWN_KEYS.has(k)) out[k] = isSensitive(k) ? MASKED_VALUE : maskExtra(v);
    else out[k] = v;
  }
  return out;
}

function mergeMap(kind: string, incoming: Record<string, string>, existing: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v !== MASKED_VALUE) out[k] = v;
    else if (k in existing) out[k] = existing[k];
    else throw new ValidationError(`Cannot set ${kind} '${k}' to masked value '***'; provide a real value.`, { code: "mcp_masked_value" });
  }
  return out;
}

function mergeExtra(key: string, incoming: unknown, existing: unknown, present: boolean): unknown {
  if (incoming === MASKED_VALUE && isSensitive(key)) {
    if (present) return existing;
    throw new ValidationError(`Cannot set extra config key '${key}' to masked value '***'; provide a real value.`, { code: "mcp_masked_value" });
  }
  if (isObj(incoming) && isObj(existing)) {
    return Object.fromEntries(Object.entries(incoming).map(([k, v]) => [k, mergeExtra(k, v, existing[k], k in existing)]));
  }
  if (Array.isArray(incoming) && Array.isArray(existing) && incoming.length === existing.length) {
    return incoming.map((v, i) => mergeExtra(key, v, existing[i], true));
  }
  return incoming;
}

/**
 * Merge a server entry sent by a client over the stored one so values the
 * GET masked round-trip unchanged: `***` env/header values and sensitive
 * extras take the stored value (only for keys that exist), args and a url
 * equal to the masked form of the stored ones take the stored ones, OAuth secrets
 * sent as null keep the stored secret and an empty string clears it.
 * `routing`/`tools` not sent are kept, as are stored extra keys.
 */
export function mergePreservingSecrets(incomingRaw: Record<string, unknown>, existingRaw: Record<string, unknown>, server = "?"): Record<string, unknown> {
  const out: Record<string, unknown> = { ...incomingRaw };
  if (Array.isArray(incomingRaw.args)) {
    out.args = restoreMaskedArgs(server, incomingRaw.args.map(String), Array.isArray(existingRaw.args) ? existingRaw.args.map(String) : []);
  }
  if ("url" in incomingRaw) out.url = restoreMaskedUrl(server, incomingRaw.url as string | null | undefined, existingRaw.url as string | null | undefined);
  out.env = mergeMap("env key", (incomingRaw.env as Record<string, string>) ?? {}, (existingRaw.env as Record<string, string>) ?? {});
  out.headers = mergeMap("header", (incomingRaw.headers as Record<string, string>) ?? {}, (existingRaw.headers as Record<string, string>) ?? {});
  if (isObj(incomingRaw.oauth) && isObj(existingRaw.oauth)) {
    const keep = (k: "client_secret" | "refresh_token") => {
      const v = (incomingRaw.oauth as Record<string, unknown>)[k];
      return v == null ? (existingRaw.oauth as Record<string, unknown>)[k] ?? null : v === "" ? null : v;
    };
    out.oauth = { ...incomingRaw.oauth, client_secret: keep("client_secret"), refresh_token: keep("refresh_token") };
  }
  for (const k of ["routing", "tools"]) if (!(k in incomingRaw) && k in existingRaw) out[k] = existingRaw[k];
  for (const [k, v] of Object.entries(incomingRaw)) if (!KNOWN_KEYS.has(k)) out[k] = mergeExtra(k, v, existingRaw[k], k in existingRaw);
  for (const [k, v] of Object.entries(existingRaw)) if (!KNOWN_KEYS.has(k) && !(k in incomingRaw)) out[k] = v;
  return out;
}

/** The raw JSON document (no `$VAR` resolution), `{}` when the file does not exist. */
export function readRawExtensionsConfig(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
  if (!isObj(parsed)) throw new ValidationError(`${file}: the top level must be a JSON object`, { code: "mcp_config_invalid" });
  return parsed;
}

/**
 * Write JSON so readers see the old or the new file, never half of one (the
 * shared atomic write: temp file, fsync, rename, fsync of the directory).
 * Mode 0o600: the file holds server credentials.
 */
export function atomicWriteJson(file: string, data: unknown): void {
  writeFileAtomicSync(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

/** The masked API view of a raw document's `mcpServers`. */
export function mcpConfigResponse(raw: Record<string, unknown>): McpConfigResponse {
  const servers = isObj(raw.mcpServers) ? raw.mcpServers : {};
  return { mcp_servers: Object.fromEntries(Object.entries(servers).map(([n, s]) => [n, maskServerEntry(normalizeServerEntry(n, s))])) };
}

/**
 * Replace `mcpServers` with `incoming` (secrets merged from the stored raw
 * entries, so `$VAR` placeholders survive a masked round trip), keep every
 * other top-level key, write atomically, return the new raw document.
 * `validate` runs on each merged entry before anything is written.
 */
export function writeMcpServers(file: string, incoming: Record<string, Record<string, unknown>>, validate: McpEntryValidator): Record<string, unknown> {
  const raw = readRawExtensionsConfig(file);
  const stored = isObj(raw.mcpServers) ? raw.mcpServers : {};
  const servers: Record<string, Record<string, unknown>> = {};
  for (const [name, entry] of Object.entries(incoming)) {
    const previous = stored[name];
    // A new server is merged against nothing, so a stray `***` is refused instead of stored.
    const merged = mergePreservingSecrets(entry, isObj(previous) ? previous : {}, name);
    const normalized = normalizeServerEntry(name, merged);
    validate(name, normalized, { incoming: entry, stored: isObj(previous) ? previous : undefined });
    servers[name] = normalized;
  }
  const next: Record<string, unknown> = { ...raw, mcpServers: servers };
  if (!("skills" in next)) next.skills = {};
  atomicWriteJson(file, next);
  return next;
}

/** Enable or disable one stored server (DeerFlow's PATCH); `validate` runs before enabling. */
export function setMcpServerEnabled(file: string, name: string, enabled: boolean, validate: McpEntryValidator): Record<string, unknown> {
  const raw = readRawExtensionsConfig(file);
  const stored = isObj(raw.mcpServers) ? raw.mcpServers : {};
  const entry = stored[name];
  if (!isObj(entry)) throw new ValidationError(`MCP server '${name}' not found`, { code: "mcp_server_not_found" });
  if (enabled) validate(name, normalizeServerEntry(name, entry), { incoming: entry, stored: entry });
  const next = { ...raw, mcpServers: { ...stored, [name]: { ...entry, enabled } } };
  atomicWriteJson(file, next);
  return next;
}
