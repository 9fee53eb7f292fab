import { z } from "zod";
import { errorMessage } from "../errors";
import { frameWebContent } from "../text";
import { tool } from "../tools";
import type { ToolDefinition, ToolResult } from "../tools";
import { FETCH_PROVIDERS } from "./fetch-providers";
import type { FetchProviderId } from "./fetch-providers";
import { DEFAULT_MAX_CHARS } from "./html-to-markdown";
import { IMAGE_PROVIDERS } from "./image-providers";
import type { ImageProviderId } from "./image-providers";
import { fetchPage } from "./page-fetch";
import { dedupeHits, formatImageResults, formatSearchResults } from "./results";
import { SEARCH_PROVIDERS } from "./search-providers";
import type { ProviderSettings, SearchProviderId } from "./search-providers";
import { createUrlGuard } from "./ssrf-guard";
import type { HostResolver, UrlGuardOptions } from "./ssrf-guard";

/** Settings shared by the three web tools (resolved from a config entry or given in code). */
export interface WebToolSettings {
  apiKey?: string;
  baseUrl?: string;
  /** Request timeout in seconds. */
  timeoutSeconds?: number;
  /** Config `max_results`: overrides the model's argument (DeerFlow's rule). */
  maxResults?: number;
  region?: string;
  safesearch?: string;
  allowPrivateAddresses?: boolean;
  maxChars?: number;
  maxBytes?: number;
  /** Provider-specific keys (search_type, country, wait_for_selector…). */
  extra?: Record<string, unknown>;
  /** DNS resolver for the SSRF guard; set in code only (tests, embedders). */
  resolver?: HostResolver;
  /** See {@link UrlGuardOptions.testLoopbackHosts}; code only. */
  testLoopbackHosts?: readonly string[];
  metadata?: Record<string, unknown>;
}

const fail = (message: string): ToolResult => ({ content: `Error: ${message}`, status: "error" });

function providerSettings(s: WebToolSettings, defaultBaseUrl: string, defaultTimeout: number, signal: AbortSignal, apiKey: string | undefined): ProviderSettings {
  return {
    apiKey,
    baseUrl: (s.baseUrl ?? defaultBaseUrl).replace(/\/+$/, ""),
    timeoutMs: (s.timeoutSeconds ?? defaultTimeout) * 1000,
    region: s.region,
    safesearch: s.safesearch === "strict" ? "on" : s.safesearch,
    extra: s.extra ?? {},
    signal,
  };
}

function missingKey(label: string, keyEnv: string | undefined): string {
  return `${label} API key is not configured: set ${keyEnv ?? "api_key"} in the environment or api_key in the tool's config entry`;
}

const searchSchema = z.object({
  query: z.string().trim().min(1).describe("Search keywords describing what you want to find. Be specific for better results."),
  max_results: z.number().int().min(1).max(50).optional().describe("Maximum number of results to return. Default is 5."),
});

/** `web_search(query, max_results)` backed by one provider. */
export function createWebSearchTool(providerId: SearchProviderId, settings: WebToolSettings = {}): ToolDefinition<z.output<typeof searchSchema>> {
  const provider = SEARCH_PROVIDERS[providerId];
  return tool({
    name: "web_search",
    description:
      "Search the web for information. Use it to find current information, news, articles and facts. Returns titles, URLs and snippets; cite the sources you use and fetch a page with web_fetch when you need its full text.",
    schema: searchSchema,
    timeoutMs: ((settings.timeoutSeconds ?? 30) + 5) * 1000,
    metadata: { provider: providerId, ...settings.metadata },
    async execute(args, runtime) {
      const apiKey = settings.apiKey;
      if (provider.keyRequired && !apiKey) return fail(missingKey(provider.label, provider.keyEnv));
      const max = Math.min(settings.maxResults ?? args.max_results ?? 5, provider.maxResults);
      try {
        const hits = await provider.search(args.query, max, providerSettings(settings, provider.defaultBaseUrl, 30, runtime.signal, apiKey));
        return frameWebContent(formatSearchResults(args.query, dedupeHits(hits, max), provider.shape));
      } catch (err) {
        return fail(errorMessage(err));
      }
    },
  });
}

const fetchSchema = z.object({
  url: z.string().trim().min(1).describe("The URL to fetch, including the scheme (https://example.com)."),
});

const FETCH_DESCRIPTION =
  "Fetch the contents of a web page at a given URL and return its main text as Markdown. Only fetch EXACT URLs that the user provided or that web_search / web_fetch returned. It cannot access pages behind a login. Do NOT add www. to URLs that do not have it. URLs must include the scheme: https://example.com is valid, example.com is not.";

/**
 * `web_fetch(url)`: `direct` fetches the page itself; a service provider
 * fetches through that service. Every target URL passes the SSRF guard
 * first; the Jina reader falls back to the direct fetch when it fails.
 */
export function createWebFetchTool(providerId: FetchProviderId | "direct", settings: WebToolSettings = {}): ToolDefinition<z.output<typeof fetchSchema>> {
  const guard = createUrlGuard({ allowPrivateAddresses: settings.allowPrivateAddresses, resolver: settings.resolver, testLoopbackHosts: settings.testLoopbackHosts });
  const maxChars = settings.maxChars ?? DEFAULT_MAX_CHARS;
  const timeoutSeconds = settings.timeoutSeconds ?? (providerId === "direct" || providerId === "jina" ? 10 : 30);
  const direct = (url: string, signal: AbortSignal) => fetchPage(url, { guard, timeoutMs: timeoutSeconds * 1000, maxChars, maxBytes: settings.maxBytes, signal }).then((p) => p.content);
  return tool({
    name: "web_fetch",
    description: FETCH_DESCRIPTION,
    schema: fetchSchema,
    timeoutMs: (timeoutSeconds * (providerId === "jina" ? 2 : 1) + 10) * 1000,
    metadata: { provider: providerId, ...settings.metadata },
    async execute(args, runtime) {
      try {
        if (providerId === "direct") return frameWebContent(await direct(args.url, runtime.signal));
        const provider = FETCH_PROVIDERS[providerId];
        // The service fetches the page for us, but a self-hosted one sits inside
        // the deployment network: the target gets the same screening.
        await guard.check(args.url);
        if (provider.keyRequired && !settings.apiKey) return fail(missingKey(provider.label, provider.keyEnv));
        const s = providerSettings({ ...settings, timeoutSeconds }, provider.defaultBaseUrl, timeoutSeconds, runtime.signal, settings.apiKey);
        try {
          return frameWebContent(await provider.fetch(args.url, maxChars, s));
        } catch (err) {
          if (providerId !== "jina" || runtime.signal.aborted) throw err;
          return frameWebContent(await direct(args.url, runtime.signal));
        }
      } catch (err) {
        return fail(errorMessage(err));
      }
    },
  });
}

const imageSchema = z.object({
  query: z.string().trim().min(1).describe('Keywords describing the images to find; be specific (e.g. "Japanese woman street photography 1990s", not "woman").'),
  max_results: z.number().int().min(1).max(50).optional().describe("Maximum number of images to return. Default is 5."),
  size: z.enum(["Small", "Medium", "Large", "Wallpaper"]).optional().describe('Image size filter. Use "Large" for reference images.'),
  type_image: z.enum(["photo", "clipart", "gif", "transparent", "line"]).optional().describe('Image type filter. Use "photo" for realistic references.'),
  layout: z.enum(["Square", "Tall", "Wide"]).optional().describe("Layout filter."),
});

/** `image_search(query, max_results, size, type_image, layout)`: results carry `image_url` and `thumbnail_url`. */
export function createImageSearchTool(providerId: ImageProviderId, settings: WebToolSettings = {}): ToolDefinition<z.output<typeof imageSchema>> {
  const provider = IMAGE_PROVIDERS[providerId];
  return tool({
    name: "image_search",
    description:
      "Search for images online. Use it BEFORE image generation to find reference images (characters, portraits, objects, scenes, styles). Returns image_url and thumbnail_url values that can be used as references.",
    schema: imageSchema,
    timeoutMs: ((settings.timeoutSeconds ?? 30) * 2 + 5) * 1000,
    metadata: { provider: providerId, ...settings.metadata },
    async execute(args, runtime) {
      if (provider.keyRequired && !settings.apiKey) return fail(missingKey(provider.label, provider.keyEnv));
      const max = Math.min(settings.maxResults ?? args.max_results ?? 5, provider.maxResults);
      try {
        const hits = await provider.search(args.query, max, { size: args.size, type_image: args.type_image, layout: args.layout }, providerSettings(settings, provider.defaultBaseUrl, 30, runtime.signal, settings.apiKey));
        return frameWebContent(formatImageResults(args.query, dedupeHits(hits, max)));
      } catch (err) {
        return fail(errorMessage(err));
      }
    },
  });
}
