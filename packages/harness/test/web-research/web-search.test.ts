import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderDouble } from "../../src/testing/web-doubles";
import type { WebDouble, WebDoubleProvider } from "../../src/testing/web-doubles";
import { createWebSearchTool } from "../../src/web-research";
import { parseRetryAfter, redact } from "../../src/web-research/provider-http";
import type { SearchProviderId } from "../../src/web-research";
import { callTool, framedJson } from "./helpers";

type Hit = { title: string; url: string; content?: string; snippet?: string };
type ObjectShape = { query: string; total_results: number; results: Hit[] };

const KEY = "sk-live-SECRET-123456";
const cases: Array<{ id: SearchProviderId; double: WebDoubleProvider; key?: boolean; shape: "object" | "list"; check(d: WebDouble): void }> = [
  {
    id: "ddg",
    double: "ddg",
    shape: "object",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "POST", path: "/html/" });
      expect(new URLSearchParams(r.body).get("q")).toBe("solar farm");
      expect(new URLSearchParams(r.body).get("kl")).toBe("wt-wt");
      expect(new URLSearchParams(r.body).get("kp")).toBe("-1");
    },
  },
  { id: "searxng", double: "searxng", shape: "list", check: (d) => expect(d.requests.at(-1)).toMatchObject({ method: "GET", path: "/search", query: { q: "solar farm", format: "json", language: "auto", pageno: "1" } }) },
  {
    id: "tavily",
    double: "tavily",
    key: true,
    shape: "list",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "POST", path: "/search", json: { query: "solar farm", max_results: 5 } });
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    },
  },
  {
    id: "brave",
    double: "brave",
    key: true,
    shape: "object",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "GET", path: "/res/v1/web/search", query: { q: "solar farm", count: "5", text_decorations: "false" } });
      expect(r.headers["x-subscription-token"]).toBe(KEY);
    },
  },
  {
    id: "serper",
    double: "serper",
    key: true,
    shape: "object",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "POST", path: "/search", json: { q: "solar farm", num: 5 } });
      expect(r.headers["x-api-key"]).toBe(KEY);
    },
  },
  {
    id: "exa",
    double: "exa",
    key: true,
    shape: "list",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "POST", path: "/search", json: { query: "solar farm", type: "auto", numResults: 5, contents: { highlights: { maxCharacters: 1000 } } } });
      expect(r.headers["x-api-key"]).toBe(KEY);
    },
  },
  {
    id: "firecrawl",
    double: "firecrawl",
    key: true,
    shape: "list",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "POST", path: "/v2/search", json: { query: "solar farm", limit: 5 } });
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    },
  },
  {
    id: "jina",
    double: "jina-search",
    key: true,
    shape: "object",
    check: (d) => {
      const r = d.requests.at(-1)!;
      expect(r).toMatchObject({ method: "GET", path: "/", query: { q: "solar farm" } });
      expect(r.headers.accept).toBe("application/json");
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    },
  },
];

const doubles = new Map<string, WebDouble>();
beforeAll(async () => {
  for (const c of cases) doubles.set(c.id, await startProviderDouble(c.double, c.key ? { apiKey: KEY } : {}));
});
afterAll(async () => Promise.all([...doubles.values()].map((d) => d.close())));

function hitsOf(text: string, shape: "object" | "list"): Array<{ title: string; url: string; text: string }> {
  if (shape === "list") return framedJson<Hit[]>(text).map((h) => ({ title: h.title, url: h.url, text: h.snippet ?? "" }));
  const o = framedJson<ObjectShape>(text);
  expect(o.query).toBe("solar farm");
  expect(o.total_results).toBe(o.results.length);
  return o.results.map((h) => ({ title: h.title, url: h.url, text: h.content ?? "" }));
}

describe.each(cases)("web_search via $id", (c) => {
  const tool = () => createWebSearchTool(c.id, { baseUrl: doubles.get(c.id)!.url, apiKey: c.key ? KEY : undefined });

  it("sends the provider's documented request and returns DeerFlow's result shape, deduplicated", async () => {
    const out = await callTool(tool(), { query: "solar farm" });
    expect(out.status).toBe("success");
    c.check(doubles.get(c.id)!);
    const hits = hitsOf(out.text, c.shape);
    // The double serves 4 results; the third repeats the first URL (with a fragment).
    expect(hits.map((h) => h.url)).toEqual(["https://news.example.com/2026/03/solar-farm", "https://council.example.org/documents/solar-ea", "https://energy.example.net/explainers/40mw"]);
    expect(hits[0].title).toBe("Riverside solar farm approved");
    expect(hits[0].text).toContain("council voted 7–2");
    expect(hits[0].text).not.toMatch(/<b>|&lt;/);
  });

  it("caps to max_results; config max_results overrides the model's argument", async () => {
    expect(hitsOf((await callTool(tool(), { query: "solar farm", max_results: 2 })).text, c.shape)).toHaveLength(2);
    const capped = createWebSearchTool(c.id, { baseUrl: doubles.get(c.id)!.url, apiKey: c.key ? KEY : undefined, maxResults: 1 });
    expect(hitsOf((await callTool(capped, { query: "solar farm", max_results: 4 })).text, c.shape)).toHaveLength(1);
  });

  it("429 with Retry-After, 5xx, bad JSON and timeouts become errors naming the provider, never the key", async () => {
    const d = doubles.get(c.id)!;
    const messages: string[] = [];
    // A provider echoing the key in its error body must not leak it through our message.
    d.fail({ status: 429, retryAfter: 7, body: JSON.stringify({ error: c.key ? `quota for ${KEY} exceeded` : "slow down" }) });
    messages.push((await callTool(tool(), { query: "solar farm" })).text);
    d.fail({ status: 503 });
    messages.push((await callTool(tool(), { query: "solar farm" })).text);
    const slow = createWebSearchTool(c.id, { baseUrl: d.url, apiKey: c.key ? KEY : undefined, timeoutSeconds: 0.2 });
    d.fail({ hang: true });
    messages.push((await callTool(slow, { query: "solar farm" })).text);
    expect(messages[0]).toMatch(/rate limit reached \(HTTP 429\); retry after 7 s/);
    expect(messages[1]).toMatch(/is unavailable \(HTTP 503\)/);
    expect(messages[2]).toMatch(/request timed out after 0\.2 s/);
    if (c.id !== "ddg") {
      d.fail({ badJson: true });
      const bad = (await callTool(tool(), { query: "solar farm" })).text;
      expect(bad).toMatch(/returned an invalid response \(not JSON\)/);
      messages.push(bad);
    }
    const label = { ddg: "DuckDuckGo", searxng: "SearXNG", tavily: "Tavily", brave: "Brave Search", serper: "Serper", exa: "Exa", firecrawl: "Firecrawl", jina: "Jina Search" }[c.id];
    for (const m of messages) {
      expect(m.startsWith(`Error: ${label} `), m).toBe(true);
      expect(m).not.toContain(KEY);
    }
  });

  if (c.key) {
    it("a wrong key is the provider's auth error; a missing key is reported before any request", async () => {
      const wrong = createWebSearchTool(c.id, { baseUrl: doubles.get(c.id)!.url, apiKey: "wrong-key-value" });
      const out = await callTool(wrong, { query: "solar farm" });
      expect(out.status).toBe("error");
      expect(out.text).toMatch(/rejected the request \(HTTP (401|403|422)\)/);
      expect(out.text).not.toContain("wrong-key-value");
      const before = doubles.get(c.id)!.requests.length;
      const none = await callTool(createWebSearchTool(c.id, { baseUrl: doubles.get(c.id)!.url }), { query: "solar farm" });
      expect(none.text).toMatch(/API key is not configured: set [A-Z_]+_API_KEY/);
      expect(doubles.get(c.id)!.requests.length).toBe(before);
    });
  }
});

describe("web_search edge cases", () => {
  it("no results is DeerFlow's JSON error object", async () => {
    const d = await startProviderDouble("serper", { results: [] });
    try {
      const out = await callTool(createWebSearchTool("serper", { baseUrl: d.url, apiKey: "k" }), { query: "nothing" });
      expect(JSON.parse(out.text.split("\n")[1])).toEqual({ error: "No results found", query: "nothing" });
    } finally {
      await d.close();
    }
  });
  it("an unreachable provider is a connection error naming it", async () => {
    const out = await callTool(createWebSearchTool("searxng", { baseUrl: "http://127.0.0.1:9" }), { query: "x" });
    expect(out.text).toMatch(/^Error: SearXNG could not be reached: Connection failed \(ECONNREFUSED\)/);
  });
  it("SearXNG without the JSON format enabled explains the fix", async () => {
    const d = await startProviderDouble("searxng");
    try {
      d.fail({ status: 403, contentType: "text/html", body: "<html>403</html>" });
      const out = await callTool(createWebSearchTool("searxng", { baseUrl: d.url }), { query: "x" });
      expect(out.text).toMatch(/search\.formats/);
    } finally {
      await d.close();
    }
  });
  it("DuckDuckGo's bot-check page is reported, not parsed as zero results", async () => {
    const d = await startProviderDouble("ddg");
    try {
      d.fail({ status: 202, contentType: "text/html", body: '<html><div class="anomaly-modal">Unfortunately, bots use DuckDuckGo too.</div></html>' });
      const out = await callTool(createWebSearchTool("ddg", { baseUrl: d.url }), { query: "x" });
      expect(out.text).toMatch(/DuckDuckGo refused the request/);
    } finally {
      await d.close();
    }
  });
});

describe("provider error helpers", () => {
  it("Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-03-14T10:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter("Sat, 14 Mar 2026 10:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
  it("redacts every occurrence of a secret", () => {
    expect(redact("key=abcd1234 and again abcd1234", ["abcd1234"])).toBe("key=[redacted] and again [redacted]");
  });
});
