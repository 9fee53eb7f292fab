import { parseHtmlDocument } from "./dom";
import { WebProviderError } from "./errors";
import { providerFetch, providerJson, statusError, unexpectedShape } from "./provider-http";
import { cleanSnippet } from "./results";
import type { SearchHit, SearchOutputShape } from "./results";

/** Resolved settings one provider call needs (from the tool's config entry). */
export interface ProviderSettings {
  apiKey?: string;
  /** The provider endpoint root, without a trailing slash. */
  baseUrl: string;
  timeoutMs: number;
  region?: string;
  safesearch?: string;
  /** Provider-specific config keys (search_type, country, …). */
  extra: Record<string, unknown>;
  signal?: AbortSignal;
}

/** A web search provider. */
export interface SearchProvider {
  id: SearchProviderId;
  /** Name used in messages. */
  label: string;
  shape: SearchOutputShape;
  defaultBaseUrl: string;
  /** Environment variable read when the entry has no `api_key`. */
  keyEnv?: string;
  keyRequired: boolean;
  /** Most results the provider returns per request. */
  maxResults: number;
  search(query: string, maxResults: number, s: ProviderSettings): Promise<SearchHit[]>;
}

/** Search providers by id. */
export type SearchProviderId = "ddg" | "searxng" | "tavily" | "brave" | "serper" | "exa" | "firecrawl" | "jina";

function arrayAt(provider: string, value: unknown, what: string): Record<string, unknown>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw unexpectedShape(provider, `${what} is not a list`);
  return value.filter((x): x is Record<string, unknown> => !!x && typeof x === "object");
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** DuckDuckGo's `kp` values for DeerFlow's safesearch words. */
function ddgSafesearch(v: string | undefined): string {
  const s = (v ?? "moderate").toLowerCase();
  return s === "on" || s === "strict" ? "1" : s === "off" ? "-2" : "-1";
}

/** The target of a DuckDuckGo redirect link (`//duckduckgo.com/l/?uddg=<url>`). */
export function unwrapDdgLink(href: string): string {
  try {
    const u = new URL(href, "https://duckduckgo.com");
    const target = u.searchParams.get("uddg");
    if (target) return target;
    return u.toString();
  } catch {
    return href;
  }
}

/** Parse DuckDuckGo's HTML results page (ads skipped). */
export function parseDdgHtml(html: string): SearchHit[] {
  const document = parseHtmlDocument(html);
  const out: SearchHit[] = [];
  for (const r of Array.from(document.querySelectorAll(".result"))) {
    const cls = r.getAttribute("class") ?? "";
    if (/\bresult--ad\b/.test(cls)) continue;
    const a = r.querySelector("a.result__a");
    if (!a) continue;
    const url = unwrapDdgLink(a.getAttribute("href") ?? "");
    if (!/^https?:/i.test(url)) continue;
    out.push({ title: cleanSnippet(a.textContent), url, snippet: cleanSnippet(r.querySelector(".result__snippet")?.textContent) });
  }
  return out;
}

const ddg: SearchProvider = {
  id: "ddg",
  label: "DuckDuckGo",
  shape: "object",
  defaultBaseUrl: "https://html.duckduckgo.com",
  keyRequired: false,
  maxResults: 30,
  async search(query, _max, s) {
    const form = new URLSearchParams({ q: query, b: "", kl: s.region ?? "wt-wt", kp: ddgSafesearch(s.safesearch) });
    const res = await providerFetch({
      provider: "DuckDuckGo",
      url: `${s.baseUrl}/html/`,
      method: "POST",
      body: form.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html", referer: `${s.baseUrl}/` },
      timeoutMs: s.timeoutMs,
      signal: s.signal,
    });
    if (res.status < 200 || res.status >= 300) throw statusError("DuckDuckGo", res, []);
    const html = res.body.toString("utf8");
    // DuckDuckGo answers rate-limited clients with a bot-check page (HTTP 202 or 200).
    if (res.status === 202 || /anomaly-modal|challenge-form/.test(html)) {
      throw new WebProviderError("DuckDuckGo", "DuckDuckGo refused the request (bot check / rate limit); retry later or configure another provider", { status: res.status });
    }
    return parseDdgHtml(html);
  },
};

const searxng: SearchProvider = {
  id: "searxng",
  label: "SearXNG",
  shape: "list",
  defaultBaseUrl: "http://localhost:8088",
  keyRequired: false,
  maxResults: 50,
  async search(query, max, s) {
    const params = new URLSearchParams({ q: query, format: "json", language: "auto", pageno: "1", limit: String(max) });
    if (s.safesearch) params.set("safesearch", s.safesearch === "off" ? "0" : s.safesearch === "on" || s.safesearch === "strict" ? "2" : "1");
    try {
      const data = await providerJson<{ results?: unknown }>({ provider: "SearXNG", url: `${s.baseUrl}/search?${params}`, timeoutMs: s.timeoutMs, signal: s.signal });
      return arrayAt("SearXNG", data?.results, "results").map((r) => ({ title: str(r.title), url: str(r.url), snippet: cleanSnippet(r.content) }));
    } catch (err) {
      if (err instanceof WebProviderError && err.status === 403) {
        throw new WebProviderError("SearXNG", `${err.message}. The instance must allow the JSON format (search.formats: [html, json] in its settings.yml)`, { status: 403 });
      }
      throw err;
    }
  },
};

const tavily: SearchProvider = {
  id: "tavily",
  label: "Tavily",
  shape: "list",
  defaultBaseUrl: "https://api.tavily.com",
  keyEnv: "TAVILY_API_KEY",
  keyRequired: true,
  maxResults: 20,
  async search(query, max, s) {
    const data = await providerJson<{ results?: unknown }>({
      provider: "Tavily",
      url: `${s.baseUrl}/search`,
      headers: { authorization: `Bearer ${s.apiKey}` },
      body: { query, max_results: max, search_depth: "basic", topic: "general" },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    if (!data || typeof data !== "object" || !("results" in data)) throw unexpectedShape("Tavily", "no results field");
    return arrayAt("Tavily", data.results, "results").map((r) => ({ title: str(r.title), url: str(r.url), snippet: cleanSnippet(r.content) }));
  },
};

const brave: SearchProvider = {
  id: "brave",
  label: "Brave Search",
  shape: "object",
  defaultBaseUrl: "https://api.search.brave.com",
  keyEnv: "BRAVE_SEARCH_API_KEY",
  keyRequired: true,
  maxResults: 20,
  async search(query, max, s) {
    const params = new URLSearchParams({ q: query.slice(0, 400), count: String(max), text_decorations: "false" });
    for (const k of ["country", "search_lang", "safesearch"]) if (typeof s.extra[k] === "string") params.set(k, s.extra[k] as string);
    const data = await providerJson<{ web?: { results?: unknown } }>({
      provider: "Brave Search",
      url: `${s.baseUrl}/res/v1/web/search?${params}`,
      headers: { "x-subscription-token": s.apiKey ?? "" },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    return arrayAt("Brave Search", data?.web?.results, "web.results").map((r) => ({ title: cleanSnippet(r.title), url: str(r.url), snippet: cleanSnippet(r.description) }));
  },
};

const serper: SearchProvider = {
  id: "serper",
  label: "Serper",
  shape: "object",
  defaultBaseUrl: "https://google.serper.dev",
  keyEnv: "SERPER_API_KEY",
  keyRequired: true,
  maxResults: 10,
  async search(query, max, s) {
    const data = await providerJson<{ organic?: unknown }>({
      provider: "Serper",
      url: `${s.baseUrl}/search`,
      headers: { "x-api-key": s.apiKey ?? "" },
      body: { q: query.slice(0, 500), num: max },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    if (!data || typeof data !== "object") throw unexpectedShape("Serper", "not an object");
    return arrayAt("Serper", data.organic, "organic").map((r) => ({ title: str(r.title), url: str(r.link), snippet: cleanSnippet(r.snippet) }));
  },
};

const exa: SearchProvider = {
  id: "exa",
  label: "Exa",
  shape: "list",
  defaultBaseUrl: "https://api.exa.ai",
  keyEnv: "EXA_API_KEY",
  keyRequired: true,
  maxResults: 100,
  async search(query, max, s) {
    const maxCharacters = typeof s.extra.contents_max_characters === "number" ? s.extra.contents_max_characters : 1000;
    const data = await providerJson<{ results?: unknown }>({
      provider: "Exa",
      url: `${s.baseUrl}/search`,
      headers: { "x-api-key": s.apiKey ?? "" },
      body: { query, type: typeof s.extra.search_type === "string" ? s.extra.search_type : "auto", numResults: max, contents: { highlights: { maxCharacters } } },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    return arrayAt("Exa", data?.results, "results").map((r) => ({
      title: str(r.title),
      url: str(r.url),
      snippet: Array.isArray(r.highlights) ? r.highlights.filter((h) => typeof h === "string").join("\n") : cleanSnippet(r.text),
    }));
  },
};

const firecrawl: SearchProvider = {
  id: "firecrawl",
  label: "Firecrawl",
  shape: "list",
  defaultBaseUrl: "https://api.firecrawl.dev",
  keyEnv: "FIRECRAWL_API_KEY",
  keyRequired: true,
  maxResults: 100,
  async search(query, max, s) {
    const data = await providerJson<{ success?: unknown; data?: { web?: unknown }; error?: unknown }>({
      provider: "Firecrawl",
      url: `${s.baseUrl}/v2/search`,
      headers: { authorization: `Bearer ${s.apiKey}` },
      body: { query, limit: max },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    if (data?.success === false) throw new WebProviderError("Firecrawl", `Firecrawl reported a failure: ${cleanSnippet(data.error).slice(0, 200)}`);
    return arrayAt("Firecrawl", data?.data?.web, "data.web").map((r) => ({ title: str(r.title), url: str(r.url), snippet: cleanSnippet(r.description) }));
  },
};

const jina: SearchProvider = {
  id: "jina",
  label: "Jina Search",
  shape: "object",
  defaultBaseUrl: "https://s.jina.ai",
  keyEnv: "JINA_API_KEY",
  keyRequired: true,
  maxResults: 10,
  async search(query, _max, s) {
    const data = await providerJson<{ data?: unknown }>({
      provider: "Jina Search",
      url: `${s.baseUrl}/?q=${encodeURIComponent(query)}`,
      headers: { authorization: `Bearer ${s.apiKey}`, "x-respond-with": "no-content" },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    return arrayAt("Jina Search", data?.data, "data").map((r) => ({ title: str(r.title), url: str(r.url), snippet: cleanSnippet(r.description ?? r.content) }));
  },
};

/** Every search provider by id. */
export const SEARCH_PROVIDERS: Readonly<Record<SearchProviderId, SearchProvider>> = Object.freeze({ ddg, searxng, tavily, brave, serper, exa, firecrawl, jina });
