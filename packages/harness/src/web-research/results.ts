import { blockedAddressReason, isBlockedHostname, parseIpLiteral } from "../net";

/** One web search result. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/** One image search result (DeerFlow's keys). */
export interface ImageHit {
  title: string;
  image_url: string;
  thumbnail_url: string;
  source_url?: string;
  width?: number;
  height?: number;
}

/**
 * How a provider's results are printed. DeerFlow's providers differ: the
 * DuckDuckGo, Serper, Brave (and our Jina) tools print
 * `{query, total_results, results:[{title,url,content}]}`, while Tavily,
 * SearXNG, Exa and Firecrawl print a bare `[{title,url,snippet}]` list.
 */
export type SearchOutputShape = "object" | "list";

/** A canonical form of a URL for duplicate detection (no fragment, lower-case host, no trailing slash). */
export function urlKey(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    const path = u.pathname.length > 1 ? u.pathname.replace(/\/+$/, "") : u.pathname;
    return `${u.protocol}//${u.host.toLowerCase()}${path}${u.search}`;
  } catch {
    return url.trim();
  }
}

/** Drop results without a URL and repeated URLs (first wins), then cap. */
export function dedupeHits<T extends { url?: string; image_url?: string }>(hits: readonly T[], max: number): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const h of hits) {
    const raw = (h.url ?? h.image_url ?? "").trim();
    if (!raw) continue;
    const key = urlKey(raw);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(h);
    if (out.length >= max) break;
  }
  return out;
}

/** Collapse whitespace and strip HTML tags/entities some providers leave in snippets. */
export function cleanSnippet(text: unknown): string {
  if (typeof text !== "string") return "";
  return text
    .replace(/<[^>]+>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/** The search tool's text output in the provider's DeerFlow shape. */
export function formatSearchResults(query: string, hits: readonly SearchHit[], shape: SearchOutputShape): string {
  if (hits.length === 0) return JSON.stringify({ error: "No results found", query });
  if (shape === "list") return JSON.stringify(hits.map((h) => ({ title: h.title, url: h.url, snippet: h.snippet })), null, 2);
  return JSON.stringify({ query, total_results: hits.length, results: hits.map((h) => ({ title: h.title, url: h.url, content: h.snippet })) }, null, 2);
}

/** The image tool's text output (DeerFlow's shape with its usage hint). */
export function formatImageResults(query: string, hits: readonly ImageHit[]): string {
  if (hits.length === 0) return JSON.stringify({ error: "No images found", query });
  return JSON.stringify(
    {
      query,
      total_results: hits.length,
      results: hits,
      usage_hint: "Use the 'image_url' values as reference images in image generation. Download them first if needed.",
    },
    null,
    2,
  );
}

/**
 * The URL when it is a public http(s) URL by its text alone, else "". Image
 * URLs from a provider are shown to the user's browser and may be
 * downloaded later, so loopback/private literals and local names are
 * dropped here (a later download goes through the full guard).
 */
export function publicUrlOrEmpty(value: unknown): string {
  if (typeof value !== "string" || !value.trim()) return "";
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    return "";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "";
  if (isBlockedHostname(u.hostname)) return "";
  const ip = parseIpLiteral(u.hostname);
  if (ip && blockedAddressReason(ip)) return "";
  return u.toString();
}
