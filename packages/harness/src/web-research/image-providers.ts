import { WebProviderError } from "./errors";
import { providerFetch, providerJson, statusError, unexpectedShape } from "./provider-http";
import { cleanSnippet, publicUrlOrEmpty } from "./results";
import type { ImageHit } from "./results";
import type { ProviderSettings } from "./search-providers";

/** image_search filters (DuckDuckGo's; other providers ignore them). */
export interface ImageFilters {
  size?: string;
  type_image?: string;
  layout?: string;
}

/** Image search providers by id. */
export type ImageProviderId = "ddg" | "serper" | "brave";

/** An image search provider. */
export interface ImageProvider {
  id: ImageProviderId;
  label: string;
  defaultBaseUrl: string;
  keyEnv?: string;
  keyRequired: boolean;
  maxResults: number;
  search(query: string, maxResults: number, filters: ImageFilters, s: ProviderSettings): Promise<ImageHit[]>;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * Keep the high-resolution and preview URLs that are public; when one is
 * missing use the other, but a URL that was present and refused is not
 * replaced by its counterpart (the preview never masquerades as the image).
 */
function pickUrls(rawImage: unknown, rawThumb: unknown): { image_url: string; thumbnail_url: string } | undefined {
  const img = publicUrlOrEmpty(rawImage);
  const thumb = publicUrlOrEmpty(rawThumb);
  const present = (v: unknown) => typeof v === "string" && v.trim() !== "";
  const image_url = img || (!present(rawImage) ? thumb : "");
  const thumbnail_url = thumb || (!present(rawThumb) ? img : "");
  return image_url || thumbnail_url ? { image_url, thumbnail_url } : undefined;
}

/** The `vqd` token DuckDuckGo embeds in its search page (needed by the image endpoint). */
export function extractVqd(html: string): string | undefined {
  return /vqd=["']?([\d-]+)["']?/.exec(html)?.[1];
}

const ddg: ImageProvider = {
  id: "ddg",
  label: "DuckDuckGo Images",
  defaultBaseUrl: "https://duckduckgo.com",
  keyRequired: false,
  maxResults: 100,
  async search(query, max, filters, s) {
    const page = await providerFetch({ provider: "DuckDuckGo Images", url: `${s.baseUrl}/?${new URLSearchParams({ q: query, iax: "images", ia: "images" })}`, headers: { accept: "text/html" }, timeoutMs: s.timeoutMs, signal: s.signal });
    if (page.status !== 200) throw statusError("DuckDuckGo Images", page, []);
    const vqd = extractVqd(page.body.toString("utf8"));
    if (!vqd) throw new WebProviderError("DuckDuckGo Images", "DuckDuckGo Images did not return a search token (bot check or changed page); retry later");
    const f = `time:,size:${filters.size ?? ""},color:,type:${filters.type_image ?? ""},layout:${filters.layout ?? ""},license:`;
    const safe = (s.safesearch ?? "moderate").toLowerCase() === "off" ? "-1" : "1";
    const params = new URLSearchParams({ l: s.region ?? "wt-wt", o: "json", q: query, vqd, f, p: safe });
    const data = await providerJson<{ results?: unknown }>({ provider: "DuckDuckGo Images", url: `${s.baseUrl}/i.js?${params}`, headers: { referer: `${s.baseUrl}/` }, timeoutMs: s.timeoutMs, signal: s.signal });
    if (!Array.isArray(data?.results)) throw unexpectedShape("DuckDuckGo Images", "results is not a list");
    const out: ImageHit[] = [];
    for (const r of data.results as Record<string, unknown>[]) {
      const urls = pickUrls(r?.image, r?.thumbnail);
      if (!urls) continue;
      out.push({ title: cleanSnippet(r.title), ...urls, source_url: publicUrlOrEmpty(r.url), width: num(r.width), height: num(r.height) });
      if (out.length >= max) break;
    }
    return out;
  },
};

const serper: ImageProvider = {
  id: "serper",
  label: "Serper",
  defaultBaseUrl: "https://google.serper.dev",
  keyEnv: "SERPER_API_KEY",
  keyRequired: true,
  maxResults: 10,
  async search(query, max, _filters, s) {
    const data = await providerJson<{ images?: unknown }>({ provider: "Serper", url: `${s.baseUrl}/images`, headers: { "x-api-key": s.apiKey ?? "" }, body: { q: query.slice(0, 500), num: max }, timeoutMs: s.timeoutMs, secrets: [s.apiKey], signal: s.signal });
    if (data?.images !== undefined && data.images !== null && !Array.isArray(data.images)) throw unexpectedShape("Serper", "images is not a list");
    const out: ImageHit[] = [];
    for (const r of (data?.images ?? []) as Record<string, unknown>[]) {
      const urls = pickUrls(r?.imageUrl, r?.thumbnailUrl);
      if (!urls) continue;
      out.push({ title: str(r.title), ...urls, source_url: publicUrlOrEmpty(r.link), width: num(r.imageWidth), height: num(r.imageHeight) });
      if (out.length >= max) break;
    }
    return out;
  },
};

const brave: ImageProvider = {
  id: "brave",
  label: "Brave Image Search",
  defaultBaseUrl: "https://api.search.brave.com",
  keyEnv: "BRAVE_SEARCH_API_KEY",
  keyRequired: true,
  maxResults: 200,
  async search(query, max, _filters, s) {
    const params = new URLSearchParams({ q: query.slice(0, 400), count: String(max) });
    for (const k of ["country", "search_lang", "safesearch", "spellcheck"]) if (s.extra[k] !== undefined) params.set(k, String(s.extra[k]));
    const data = await providerJson<{ results?: unknown }>({ provider: "Brave Image Search", url: `${s.baseUrl}/res/v1/images/search?${params}`, headers: { "x-subscription-token": s.apiKey ?? "" }, timeoutMs: s.timeoutMs, secrets: [s.apiKey], signal: s.signal });
    if (data?.results !== undefined && data.results !== null && !Array.isArray(data.results)) throw unexpectedShape("Brave Image Search", "results is not a list");
    const out: ImageHit[] = [];
    for (const r of (data?.results ?? []) as Record<string, unknown>[]) {
      const props = (r?.properties ?? {}) as Record<string, unknown>;
      const thumb = (r?.thumbnail ?? {}) as Record<string, unknown>;
      const urls = pickUrls(props.url, thumb.src);
      if (!urls) continue;
      out.push({ title: str(r.title), ...urls, source_url: publicUrlOrEmpty(r.url), width: num(props.width), height: num(props.height) });
      if (out.length >= max) break;
    }
    return out;
  },
};

/** Every image provider by id. */
export const IMAGE_PROVIDERS: Readonly<Record<ImageProviderId, ImageProvider>> = Object.freeze({ ddg, serper, brave });
