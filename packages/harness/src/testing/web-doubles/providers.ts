import { json, startDoubleServer } from "./server";
import type { DoubleReply, RecordedWebRequest, WebDouble } from "./server";

/** A search result the doubles serve (converted to each provider's wire shape). */
export interface DoubleSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** An image result the doubles serve. */
export interface DoubleImageResult {
  title: string;
  image: string;
  thumbnail: string;
  source: string;
  width: number;
  height: number;
}

/** Providers a double exists for. */
export type WebDoubleProvider = "ddg" | "searxng" | "tavily" | "brave" | "serper" | "exa" | "firecrawl" | "jina-search" | "jina-reader" | "browserless" | "crawl4ai";

/** Options of {@link startProviderDouble}. */
export interface ProviderDoubleOptions {
  /** Served for every query (default {@link DEFAULT_SEARCH_RESULTS}). */
  results?: DoubleSearchResult[];
  images?: DoubleImageResult[];
  /** The key the double accepts; requests with another key get the provider's auth error. Omit to accept any. */
  apiKey?: string;
  /** HTML the reader/scrape doubles return per target URL. */
  pages?: Record<string, { title: string; html: string; markdown?: string }>;
}

/** Three results, the third repeating the first URL with a fragment (dedupe must drop it). */
export const DEFAULT_SEARCH_RESULTS: readonly DoubleSearchResult[] = Object.freeze([
  { title: "Riverside solar farm approved", url: "https://news.example.com/2026/03/solar-farm", snippet: "The council voted 7–2 to approve a 40-megawatt solar farm on the disused rail yard." },
  { title: "Solar farm environmental assessment", url: "https://council.example.org/documents/solar-ea", snippet: "Full environmental assessment of the east bank site, including soil remediation." },
  { title: "Riverside solar farm approved (live updates)", url: "https://news.example.com/2026/03/solar-farm#live", snippet: "Live coverage of the council vote." },
  { title: "What a 40 MW farm means for households", url: "https://energy.example.net/explainers/40mw", snippet: "A 40 MW plant supplies about a tenth of a mid-size city's households." },
]);

/** Two image results plus one pointing at a loopback address (the tool must drop it). */
export const DEFAULT_IMAGE_RESULTS: readonly DoubleImageResult[] = Object.freeze([
  { title: "Solar panels at dusk", image: "https://images.example.com/solar-dusk.jpg", thumbnail: "https://tse.example.com/th?id=solar-dusk", source: "https://photos.example.com/solar-dusk", width: 1920, height: 1080 },
  { title: "Rail yard aerial view", image: "https://images.example.com/rail-yard.jpg", thumbnail: "https://tse.example.com/th?id=rail-yard", source: "https://photos.example.com/rail-yard", width: 1600, height: 900 },
  { title: "Internal image", image: "http://127.0.0.1/secret.png", thumbnail: "http://169.254.169.254/latest/meta-data", source: "http://localhost/", width: 10, height: 10 },
]);

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function header(req: RecordedWebRequest, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : (v ?? "");
}

/** DuckDuckGo's HTML endpoint page: an ad first, then organic results with `uddg` redirect links. */
function ddgHtml(results: readonly DoubleSearchResult[]): string {
  const ad = `<div class="result results_links results_links_deep result--ad result--ad--small"><div class="links_main links_deep result__body"><h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example.com&amp;u3=x">Sponsored: cheap panels</a></h2><a class="result__snippet" href="#">Ad text</a></div></div>`;
  const items = results.map(
    (r) =>
      `<div class="result results_links results_links_deep web-result "><div class="links_main links_deep result__body"><h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=abc123">${esc(r.title)}</a></h2><div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}">${esc(new URL(r.url).host)}</a></div></div><a class="result__snippet" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}">${esc(r.snippet).replace(/solar/i, "<b>$&</b>")}</a><div class="clear"></div></div></div>`,
  );
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>solar at DuckDuckGo</title></head><body><div id="links" class="results">${ad}${items.join("")}</div></body></html>`;
}

const VQD = "4-123456789012345678901234567890";

type Handler = (req: RecordedWebRequest, o: Required<Pick<ProviderDoubleOptions, "results" | "images" | "pages">> & ProviderDoubleOptions) => DoubleReply | undefined;

function keyOk(o: ProviderDoubleOptions, given: string): boolean {
  return o.apiKey === undefined || given === o.apiKey;
}

const bearer = (req: RecordedWebRequest) => header(req, "authorization").replace(/^Bearer\s+/i, "");

const HANDLERS: Record<WebDoubleProvider, Handler> = {
  ddg(req, o) {
    if (req.method === "POST" && req.path === "/html/") return { headers: { "content-type": "text/html; charset=utf-8" }, body: ddgHtml(o.results) };
    if (req.method === "GET" && req.path === "/" && req.query.iax === "images") {
      return { headers: { "content-type": "text/html; charset=utf-8" }, body: `<!DOCTYPE html><html><head><script>vqd="${VQD}";</script></head><body></body></html>` };
    }
    if (req.path === "/i.js") {
      if (req.query.vqd !== VQD) return { status: 403, headers: { "content-type": "text/plain" }, body: "Forbidden" };
      return json({ query: req.query.q, queryEncoded: encodeURIComponent(req.query.q ?? ""), response_type: "places", next: "i.js?q=x&o=json&p=1&s=100", vqd: { [req.query.q ?? ""]: VQD }, results: o.images.map((i) => ({ height: i.height, width: i.width, image: i.image, thumbnail: i.thumbnail, source: "Bing", title: i.title, url: i.source })) });
    }
    return undefined;
  },
  searxng(req, o) {
    if (req.path !== "/search") return undefined;
    if (req.query.format !== "json") return { status: 403, headers: { "content-type": "text/html" }, body: "<html><body>403 Forbidden</body></html>" };
    return json({
      query: req.query.q,
      number_of_results: 0,
      results: o.results.map((r, i) => ({ url: r.url, title: r.title, content: r.snippet, engine: "duckduckgo", parsed_url: ["https", new URL(r.url).host, new URL(r.url).pathname, "", "", ""], template: "default.html", engines: ["duckduckgo", "brave"], positions: [i + 1], score: 1 / (i + 1), category: "general" })),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: [],
    });
  },
  tavily(req, o) {
    if (!keyOk(o, bearer(req))) return json({ detail: { error: "Unauthorized: missing or invalid API key." } }, 401);
    const body = (req.json ?? {}) as { max_results?: number; urls?: string[] };
    if (req.path === "/search") {
      return json({ query: (req.json as { query?: string })?.query, follow_up_questions: null, answer: null, images: [], results: o.results.slice(0, body.max_results ?? 5).map((r, i) => ({ title: r.title, url: r.url, content: r.snippet, score: 0.9 - i / 10, raw_content: null })), response_time: "0.84", request_id: "req-1" });
    }
    if (req.path === "/extract") {
      const url = body.urls?.[0] ?? "";
      const page = o.pages[url];
      if (!page) return json({ results: [], failed_results: [{ url, error: "Failed to fetch url" }], response_time: 0.2 });
      return json({ results: [{ url, title: page.title, raw_content: page.markdown ?? page.title, images: [] }], failed_results: [], response_time: 0.3 });
    }
    return undefined;
  },
  brave(req, o) {
    if (!keyOk(o, header(req, "x-subscription-token"))) {
      return json({ type: "ErrorResponse", error: { id: "e-1", status: 422, code: "SUBSCRIPTION_TOKEN_INVALID", detail: "The provided subscription token is invalid.", meta: { component: "authentication" } }, time: 1 }, 422);
    }
    const count = Number(req.query.count ?? 20);
    if (req.path === "/res/v1/web/search") {
      return json({ type: "search", query: { original: req.query.q, more_results_available: false }, mixed: { type: "mixed", main: [] }, web: { type: "search", family_friendly: true, results: o.results.slice(0, count).map((r) => ({ type: "search_result", title: r.title, url: r.url, description: r.snippet, is_source_local: false, is_source_both: false, language: "en", family_friendly: true, meta_url: { scheme: "https", netloc: new URL(r.url).host, hostname: new URL(r.url).host, path: new URL(r.url).pathname } })) } });
    }
    if (req.path === "/res/v1/images/search") {
      return json({ type: "images", query: { original: req.query.q }, results: o.images.slice(0, count).map((i) => ({ type: "image_result", title: i.title, url: i.source, source: new URL(i.source).host, page_fetched: "2026-03-01T00:00:00Z", thumbnail: { src: i.thumbnail }, properties: { url: i.image, placeholder: i.thumbnail, width: i.width, height: i.height }, meta_url: { hostname: new URL(i.source).host } })) });
    }
    return undefined;
  },
  serper(req, o) {
    if (!keyOk(o, header(req, "x-api-key"))) return json({ message: "Unauthorized.", statusCode: 403 }, 403);
    const body = (req.json ?? {}) as { q?: string; num?: number };
    const params = { q: body.q, type: req.path === "/images" ? "images" : "search", num: body.num ?? 10, engine: "google" };
    if (req.path === "/search") return json({ searchParameters: params, organic: o.results.slice(0, body.num ?? 10).map((r, i) => ({ title: r.title, link: r.url, snippet: r.snippet, position: i + 1 })), credits: 1 });
    if (req.path === "/images") {
      return json({ searchParameters: params, images: o.images.slice(0, body.num ?? 10).map((i, k) => ({ title: i.title, imageUrl: i.image, imageWidth: i.width, imageHeight: i.height, thumbnailUrl: i.thumbnail, thumbnailWidth: 300, thumbnailHeight: 168, source: new URL(i.source).host, domain: new URL(i.source).host, link: i.source, googleUrl: `https://www.google.com/imgres?imgurl=${encodeURIComponent(i.image)}`, position: k + 1 })), credits: 1 });
    }
    return undefined;
  },
  exa(req, o) {
    if (!keyOk(o, header(req, "x-api-key"))) return json({ requestId: "r-1", error: "Invalid API key", tag: "INVALID_API_KEY" }, 401);
    const body = (req.json ?? {}) as { numResults?: number; urls?: string[] };
    if (req.path === "/search") {
      return json({ requestId: "r-2", resolvedSearchType: "neural", results: o.results.slice(0, body.numResults ?? 10).map((r, i) => ({ id: r.url, title: r.title, url: r.url, publishedDate: "2026-03-14T00:00:00.000Z", author: null, highlights: [r.snippet], highlightScores: [0.5 - i / 10] })), costDollars: { total: 0.005 } });
    }
    if (req.path === "/contents") {
      const url = body.urls?.[0] ?? "";
      const page = o.pages[url];
      if (!page) return json({ requestId: "r-3", results: [], statuses: [{ id: url, status: "error", error: { tag: "CRAWL_NOT_FOUND", httpStatusCode: 404 } }] });
      return json({ requestId: "r-3", results: [{ id: url, url, title: page.title, text: page.markdown ?? page.title }], statuses: [{ id: url, status: "success" }] });
    }
    return undefined;
  },
  firecrawl(req, o) {
    if (!keyOk(o, bearer(req))) return json({ success: false, error: "Unauthorized: Invalid token" }, 401);
    const body = (req.json ?? {}) as { limit?: number; url?: string };
    if (req.path === "/v2/search") return json({ success: true, data: { web: o.results.slice(0, body.limit ?? 5).map((r, i) => ({ url: r.url, title: r.title, description: r.snippet, position: i + 1 })) }, creditsUsed: 1 });
    if (req.path === "/v2/scrape") {
      const page = o.pages[body.url ?? ""];
      if (!page) return json({ success: false, error: "Scrape failed: page not found" }, 404);
      return json({ success: true, data: { markdown: page.markdown ?? page.title, metadata: { title: page.title, sourceURL: body.url, url: body.url, statusCode: 200, contentType: "text/html" } } });
    }
    return undefined;
  },
  "jina-search"(req, o) {
    if (!keyOk(o, bearer(req))) return json({ data: null, code: 401, name: "AuthenticationRequiredError", status: 40103, message: "Invalid API key", readableMessage: "AuthenticationRequiredError: Invalid API key" }, 401);
    if (req.path !== "/" || !req.query.q) return undefined;
    return json({ code: 200, status: 20000, data: o.results.map((r) => ({ title: r.title, url: r.url, description: r.snippet, usage: { tokens: 1000 } })), meta: { usage: { tokens: 10000 } } });
  },
  "jina-reader"(req, o) {
    if (req.method !== "POST" || req.path !== "/") return undefined;
    if (o.apiKey !== undefined && header(req, "authorization") && !keyOk(o, bearer(req))) return json({ data: null, code: 401, name: "AuthenticationFailedError", status: 40101, message: "Invalid API key" }, 401);
    const url = (req.json as { url?: string })?.url ?? "";
    const page = o.pages[url];
    if (!page) return json({ data: null, code: 422, name: "AssertionFailureError", status: 42206, message: `Failed to goto ${url}` }, 422);
    return { headers: { "content-type": "text/plain; charset=utf-8" }, body: page.html };
  },
  browserless(req, o): DoubleReply | undefined {
    if (req.path !== "/content" || req.method !== "POST") return undefined;
    if (o.apiKey !== undefined && (req.json as { token?: string })?.token !== o.apiKey) return { status: 401, headers: { "content-type": "text/plain" }, body: "Unauthorized" };
    const page = o.pages[(req.json as { url?: string })?.url ?? ""];
    if (!page) return { status: 400, headers: { "content-type": "text/plain" }, body: "net::ERR_NAME_NOT_RESOLVED" };
    return { headers: { "content-type": "text/html; charset=utf-8", "x-response-code": "200", "x-response-status": "OK" }, body: page.html };
  },
  crawl4ai(req, o) {
    if (req.path !== "/md" || req.method !== "POST") return undefined;
    if (!keyOk(o, bearer(req))) return json({ detail: "Invalid or missing token" }, 401);
    const body = (req.json ?? {}) as { url?: string; f?: string };
    const page = o.pages[body.url ?? ""];
    if (!page) return json({ url: body.url, filter: body.f, markdown: "", success: false });
    return json({ url: body.url, filter: body.f ?? "fit", query: null, cache: "0", markdown: page.markdown ?? `# ${page.title}`, success: true });
  },
};

/**
 * Start a local double for one provider, speaking its documented wire
 * format (request paths, auth headers, response JSON, error bodies). Use
 * `double.url` as the tool entry's `base_url`; `double.fail(...)` injects
 * 401/429/5xx answers, hangs and bad JSON.
 */
export function startProviderDouble(provider: WebDoubleProvider, options: ProviderDoubleOptions = {}): Promise<WebDouble> {
  const o = { ...options, results: options.results ?? [...DEFAULT_SEARCH_RESULTS], images: options.images ?? [...DEFAULT_IMAGE_RESULTS], pages: options.pages ?? {} };
  const handle = HANDLERS[provider];
  return startDoubleServer((req) => handle(req, o));
}
