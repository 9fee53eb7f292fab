import { WebProviderError } from "./errors";
import { htmlToMarkdown } from "./html-to-markdown";
import { providerFetch, providerJson, statusError } from "./provider-http";
import type { ProviderSettings } from "./search-providers";

/** web_fetch providers that fetch through a service (the direct one is `fetchPage`). */
export type FetchProviderId = "jina" | "firecrawl" | "exa" | "tavily" | "browserless" | "crawl4ai";

/** A web_fetch provider that asks a service for the page. */
export interface FetchProvider {
  id: FetchProviderId;
  label: string;
  defaultBaseUrl: string;
  keyEnv?: string;
  keyRequired: boolean;
  /** Returns DeerFlow's `# {title}\n\n{markdown}`, cut to `maxChars`. */
  fetch(url: string, maxChars: number, s: ProviderSettings): Promise<string>;
}

function titled(title: string | undefined, markdown: string, maxChars: number): string {
  const text = `# ${title?.trim() || "Untitled"}\n\n${markdown.trim()}`;
  return maxChars > 0 && text.length > maxChars ? text.slice(0, maxChars) : text;
}

const jina: FetchProvider = {
  id: "jina",
  label: "Jina Reader",
  defaultBaseUrl: "https://r.jina.ai",
  keyEnv: "JINA_API_KEY",
  // The reader works without a key at a lower rate limit.
  keyRequired: false,
  async fetch(url, maxChars, s) {
    const headers: Record<string, string> = { "x-return-format": "html", "x-timeout": String(Math.max(1, Math.round(s.timeoutMs / 1000))), accept: "text/html" };
    if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`;
    const res = await providerFetch({ provider: "Jina Reader", url: `${s.baseUrl}/`, method: "POST", body: { url }, headers, timeoutMs: s.timeoutMs, secrets: [s.apiKey], signal: s.signal });
    if (res.status !== 200) throw statusError("Jina Reader", res, [s.apiKey]);
    const html = res.body.toString("utf8");
    if (!html.trim()) throw new WebProviderError("Jina Reader", "Jina Reader returned an empty response");
    return htmlToMarkdown(html, { url, maxChars }).formatted;
  },
};

const firecrawl: FetchProvider = {
  id: "firecrawl",
  label: "Firecrawl",
  defaultBaseUrl: "https://api.firecrawl.dev",
  keyEnv: "FIRECRAWL_API_KEY",
  keyRequired: true,
  async fetch(url, maxChars, s) {
    const data = await providerJson<{ success?: boolean; data?: { markdown?: unknown; metadata?: { title?: unknown; error?: unknown } }; error?: unknown }>({
      provider: "Firecrawl",
      url: `${s.baseUrl}/v2/scrape`,
      headers: { authorization: `Bearer ${s.apiKey}` },
      body: { url, formats: ["markdown"], onlyMainContent: true },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    const md = typeof data?.data?.markdown === "string" ? data.data.markdown : "";
    if (data?.success === false || !md.trim()) throw new WebProviderError("Firecrawl", `Firecrawl returned no content for ${url}${typeof data?.error === "string" ? `: ${data.error.slice(0, 200)}` : ""}`);
    const title = data?.data?.metadata?.title;
    return titled(typeof title === "string" ? title : undefined, md, maxChars);
  },
};

const exa: FetchProvider = {
  id: "exa",
  label: "Exa",
  defaultBaseUrl: "https://api.exa.ai",
  keyEnv: "EXA_API_KEY",
  keyRequired: true,
  async fetch(url, maxChars, s) {
    const data = await providerJson<{ results?: Array<{ title?: unknown; text?: unknown }>; statuses?: Array<{ status?: unknown; error?: { tag?: unknown } }> }>({
      provider: "Exa",
      url: `${s.baseUrl}/contents`,
      headers: { "x-api-key": s.apiKey ?? "" },
      body: { urls: [url], text: { maxCharacters: maxChars > 0 ? maxChars : 20000 } },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    const first = Array.isArray(data?.results) ? data.results[0] : undefined;
    if (!first) {
      const st = Array.isArray(data?.statuses) ? data.statuses[0] : undefined;
      throw new WebProviderError("Exa", `Exa returned no content for ${url}${st?.error?.tag ? ` (${String(st.error.tag)})` : ""}`);
    }
    return titled(typeof first.title === "string" ? first.title : undefined, typeof first.text === "string" ? first.text : "", maxChars);
  },
};

const tavily: FetchProvider = {
  id: "tavily",
  label: "Tavily",
  defaultBaseUrl: "https://api.tavily.com",
  keyEnv: "TAVILY_API_KEY",
  keyRequired: true,
  async fetch(url, maxChars, s) {
    const data = await providerJson<{ results?: Array<{ title?: unknown; raw_content?: unknown }>; failed_results?: Array<{ error?: unknown }> }>({
      provider: "Tavily",
      url: `${s.baseUrl}/extract`,
      headers: { authorization: `Bearer ${s.apiKey}` },
      body: { urls: [url] },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    const failed = Array.isArray(data?.failed_results) ? data.failed_results[0] : undefined;
    if (failed) throw new WebProviderError("Tavily", `Tavily could not extract ${url}: ${String(failed.error ?? "unknown error").slice(0, 200)}`);
    const first = Array.isArray(data?.results) ? data.results[0] : undefined;
    if (!first) throw new WebProviderError("Tavily", `Tavily returned no content for ${url}`);
    return titled(typeof first.title === "string" ? first.title : undefined, typeof first.raw_content === "string" ? first.raw_content : "", maxChars);
  },
};

const browserless: FetchProvider = {
  id: "browserless",
  label: "Browserless",
  defaultBaseUrl: "http://localhost:3032",
  keyEnv: "BROWSERLESS_TOKEN",
  keyRequired: false,
  async fetch(url, maxChars, s) {
    const body: Record<string, unknown> = { url };
    if (s.apiKey) body.token = s.apiKey;
    if (typeof s.extra.wait_for_event === "string") body.waitForEvent = s.extra.wait_for_event;
    if (typeof s.extra.wait_for_timeout_ms === "number") body.waitForTimeout = s.extra.wait_for_timeout_ms;
    if (typeof s.extra.wait_for_selector === "string") body.waitForSelector = { selector: s.extra.wait_for_selector };
    const res = await providerFetch({ provider: "Browserless", url: `${s.baseUrl}/content`, method: "POST", body, headers: { accept: "text/html", "cache-control": "no-cache" }, timeoutMs: s.timeoutMs, secrets: [s.apiKey], signal: s.signal });
    if (res.status !== 200) throw statusError("Browserless", res, [s.apiKey]);
    const html = res.body.toString("utf8");
    if (!html.trim()) throw new WebProviderError("Browserless", "Browserless returned an empty response");
    return htmlToMarkdown(html, { url, maxChars }).formatted;
  },
};

const crawl4ai: FetchProvider = {
  id: "crawl4ai",
  label: "Crawl4AI",
  defaultBaseUrl: "http://localhost:11235",
  keyEnv: "CRAWL4AI_TOKEN",
  keyRequired: false,
  async fetch(url, maxChars, s) {
    const data = await providerJson<{ success?: unknown; markdown?: unknown }>({
      provider: "Crawl4AI",
      url: `${s.baseUrl}/md`,
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      body: { url, f: typeof s.extra.filter === "string" ? s.extra.filter : "fit" },
      timeoutMs: s.timeoutMs,
      secrets: [s.apiKey],
      signal: s.signal,
    });
    const md = typeof data?.markdown === "string" ? data.markdown : "";
    if (data?.success === false || !md.trim()) throw new WebProviderError("Crawl4AI", `Crawl4AI returned no markdown for ${url}`);
    const heading = /^#\s+(.+)$/m.exec(md)?.[1];
    // A leading `# heading` becomes the title rather than appearing twice.
    return titled(heading, md.replace(/^#\s+.+\n+/, ""), maxChars);
  },
};

/** Every service-backed fetch provider by id. */
export const FETCH_PROVIDERS: Readonly<Record<FetchProviderId, FetchProvider>> = Object.freeze({ jina, firecrawl, exa, tavily, browserless, crawl4ai });
