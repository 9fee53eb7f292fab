import type { ToolDefinition } from "../tools";
import { FETCH_PROVIDERS } from "./fetch-providers";
import type { FetchProviderId } from "./fetch-providers";
import { IMAGE_PROVIDERS } from "./image-providers";
import type { ImageProviderId } from "./image-providers";
import { SEARCH_PROVIDERS } from "./search-providers";
import type { SearchProviderId } from "./search-providers";
import type { HostResolver } from "./ssrf-guard";
import { parseWebToolEntry } from "../config/web-tool-config";
import type { WebToolEntry } from "../config/web-tool-config";
import { createImageSearchTool, createWebFetchTool, createWebSearchTool } from "./web-tools";
import type { WebToolSettings } from "./web-tools";

/** What {@link resolveWebToolEntry} needs besides the entry. */
export interface WebToolContext {
  warn(message: string): void;
  /** Environment for API-key fallbacks (`SERPER_API_KEY`…); defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * DNS resolver for the SSRF guard. A code-only seam (tests simulate
   * rebinding with it); no config key can set it.
   */
  resolver?: HostResolver;
  /** Code-only test seam of the SSRF guard (see `UrlGuardOptions.testLoopbackHosts`). */
  testLoopbackHosts?: readonly string[];
}

type Target = { kind: "search"; provider: SearchProviderId } | { kind: "fetch"; provider: FetchProviderId | "direct" } | { kind: "image"; provider: ImageProviderId };

/** DeerFlow's community class paths we implement, and what each maps to. */
const CLASS_PATHS: Readonly<Record<string, Target>> = Object.freeze({
  "deerflow.community.ddg_search.tools:web_search_tool": { kind: "search", provider: "ddg" },
  "deerflow.community.searxng.tools:web_search_tool": { kind: "search", provider: "searxng" },
  "deerflow.community.serper.tools:web_search_tool": { kind: "search", provider: "serper" },
  "deerflow.community.brave.tools:web_search_tool": { kind: "search", provider: "brave" },
  "deerflow.community.tavily.tools:web_search_tool": { kind: "search", provider: "tavily" },
  "deerflow.community.exa.tools:web_search_tool": { kind: "search", provider: "exa" },
  "deerflow.community.firecrawl.tools:web_search_tool": { kind: "search", provider: "firecrawl" },
  "deerflow.community.jina_ai.tools:web_fetch_tool": { kind: "fetch", provider: "jina" },
  "deerflow.community.exa.tools:web_fetch_tool": { kind: "fetch", provider: "exa" },
  "deerflow.community.firecrawl.tools:web_fetch_tool": { kind: "fetch", provider: "firecrawl" },
  "deerflow.community.tavily.tools:web_fetch_tool": { kind: "fetch", provider: "tavily" },
  "deerflow.community.browserless.tools:web_fetch_tool": { kind: "fetch", provider: "browserless" },
  "deerflow.community.crawl4ai.tools:web_fetch_tool": { kind: "fetch", provider: "crawl4ai" },
  "deerflow.community.image_search.tools:image_search_tool": { kind: "image", provider: "ddg" },
  "deerflow.community.serper.tools:image_search_tool": { kind: "image", provider: "serper" },
  "deerflow.community.brave.tools:image_search_tool": { kind: "image", provider: "brave" },
});

/** Our own ids: `web:fetch`, `web:fetch:<provider>`, `web:search:<provider>`, `web:image_search:<provider>`. */
function ourTarget(use: string): Target | undefined {
  if (use === "web:fetch" || use === "web:fetch:direct") return { kind: "fetch", provider: "direct" };
  const m = /^web:(search|fetch|image_search):([a-z0-9]+)$/.exec(use);
  if (!m) return undefined;
  if (m[1] === "search" && m[2] in SEARCH_PROVIDERS) return { kind: "search", provider: m[2] as SearchProviderId };
  if (m[1] === "fetch" && m[2] in FETCH_PROVIDERS) return { kind: "fetch", provider: m[2] as FetchProviderId };
  if (m[1] === "image_search" && m[2] in IMAGE_PROVIDERS) return { kind: "image", provider: m[2] as ImageProviderId };
  return undefined;
}

function targetOf(use: string): Target | undefined {
  return CLASS_PATHS[use] ?? ourTarget(use);
}

/** Every web `use:` value resolved here (DeerFlow class paths and our ids). */
export function webToolUses(): string[] {
  const ours = ["web:fetch", ...Object.keys(SEARCH_PROVIDERS).map((p) => `web:search:${p}`), ...Object.keys(FETCH_PROVIDERS).map((p) => `web:fetch:${p}`), ...Object.keys(IMAGE_PROVIDERS).map((p) => `web:image_search:${p}`)];
  return [...Object.keys(CLASS_PATHS), ...ours].sort();
}

function keyEnvOf(t: Target): string | undefined {
  if (t.kind === "search") return SEARCH_PROVIDERS[t.provider].keyEnv;
  if (t.kind === "image") return IMAGE_PROVIDERS[t.provider].keyEnv;
  return t.provider === "direct" ? undefined : FETCH_PROVIDERS[t.provider].keyEnv;
}

function usable(v: string | undefined): string | undefined {
  const s = v?.trim();
  // An unresolved `$VAR` reference means the variable is not set.
  return s && !s.startsWith("$") ? s : undefined;
}

const PROVIDER_KEYS = ["search_type", "contents_max_characters", "country", "search_lang", "spellcheck", "filter", "wait_for_event", "wait_for_timeout_ms", "wait_for_selector"];

function settingsOf(entry: WebToolEntry, t: Target, index: number, ctx: WebToolContext): WebToolSettings {
  const env = ctx.env ?? process.env;
  const keyEnv = keyEnvOf(t);
  const apiKey = usable(entry.api_key) ?? usable(entry.token) ?? (keyEnv ? usable(env[keyEnv]) : undefined);
  if (entry.api_key?.trim().startsWith("$")) ctx.warn(`tools[${index}].api_key: ${entry.api_key} is not set in the environment`);
  if (entry.proxy) ctx.warn(`tools[${index}].proxy: proxies are not supported; '${entry.name}' connects directly`);
  const backend = Array.isArray(entry.backend) ? entry.backend.join(",") : entry.backend;
  if (backend && !["auto", "duckduckgo", "html"].includes(backend.trim().toLowerCase())) {
    ctx.warn(`tools[${index}].backend: only DuckDuckGo's HTML endpoint is implemented; '${backend}' is ignored`);
  }
  const extra: Record<string, unknown> = {};
  for (const k of PROVIDER_KEYS) if (entry[k] !== undefined) extra[k] = entry[k];
  return {
    apiKey,
    baseUrl: entry.base_url,
    timeoutSeconds: entry.timeout ?? entry.timeout_s,
    maxResults: entry.max_results,
    region: entry.region,
    safesearch: entry.safesearch,
    allowPrivateAddresses: entry.allow_private_addresses,
    maxChars: entry.max_chars,
    maxBytes: entry.max_bytes,
    extra,
    resolver: ctx.resolver,
    testLoopbackHosts: ctx.testLoopbackHosts,
    metadata: { group: entry.group ?? undefined, use: entry.use },
  };
}

/**
 * Resolve one `tools:` entry to a web tool, or undefined when its `use:`
 * is not a web tool implemented here (the caller decides what that means).
 * The entry's keys are validated: a bad value is a ConfigError naming
 * `tools[index].<key>`. A configured name other than the tool's own is
 * warned about and the tool's own name is used, as DeerFlow does.
 */
export function resolveWebToolEntry(entry: unknown, index: number, ctx: WebToolContext): ToolDefinition | undefined {
  const use = (entry as { use?: unknown })?.use;
  const target = typeof use === "string" ? targetOf(use) : undefined;
  if (!target) return undefined;
  const parsed = parseWebToolEntry(entry, index);
  const settings = settingsOf(parsed, target, index, ctx);
  const def =
    target.kind === "search" ? createWebSearchTool(target.provider, settings) : target.kind === "image" ? createImageSearchTool(target.provider, settings) : createWebFetchTool(target.provider, settings);
  if (parsed.name !== def.name) ctx.warn(`tools[${index}]: configured name '${parsed.name}' differs from the tool's own name '${def.name}'; using '${def.name}'`);
  return def;
}
