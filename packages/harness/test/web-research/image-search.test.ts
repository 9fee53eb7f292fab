import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderDouble } from "../../src/testing/web-doubles";
import type { WebDouble } from "../../src/testing/web-doubles";
import { createImageSearchTool } from "../../src/web-research";
import { callTool, framedJson } from "./helpers";

type Out = { query: string; total_results: number; results: Array<{ title: string; image_url: string; thumbnail_url: string; source_url?: string; width?: number }>; usage_hint: string };

let ddg: WebDouble;
let serper: WebDouble;
let brave: WebDouble;
beforeAll(async () => {
  ddg = await startProviderDouble("ddg");
  serper = await startProviderDouble("serper", { apiKey: "serper-key" });
  brave = await startProviderDouble("brave", { apiKey: "brave-key" });
});
afterAll(async () => Promise.all([ddg.close(), serper.close(), brave.close()]));

describe("image_search", () => {
  it("DuckDuckGo (DeerFlow's default): token page, then i.js with the filters; image and thumbnail URLs; loopback/metadata URLs dropped", async () => {
    const tool = createImageSearchTool("ddg", { baseUrl: ddg.url });
    const out = await callTool(tool, { query: "solar panels", size: "Large", type_image: "photo", layout: "Wide" });
    expect(out.status).toBe("success");
    const [tokenReq, jsonReq] = ddg.requests.slice(-2);
    expect(tokenReq).toMatchObject({ method: "GET", path: "/", query: { q: "solar panels", iax: "images", ia: "images" } });
    expect(jsonReq).toMatchObject({ path: "/i.js", query: { q: "solar panels", o: "json", l: "wt-wt", vqd: "4-123456789012345678901234567890", f: "time:,size:Large,color:,type:photo,layout:Wide,license:" } });
    const body = framedJson<Out>(out.text);
    expect(body.total_results).toBe(2);
    expect(body.results[0]).toMatchObject({ title: "Solar panels at dusk", image_url: "https://images.example.com/solar-dusk.jpg", thumbnail_url: "https://tse.example.com/th?id=solar-dusk", source_url: "https://photos.example.com/solar-dusk", width: 1920 });
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|169\.254|localhost/);
    expect(body.usage_hint).toMatch(/image_url/);
  });

  it("Serper images: POST /images with X-API-KEY; capped at max_results", async () => {
    const tool = createImageSearchTool("serper", { baseUrl: serper.url, apiKey: "serper-key" });
    const body = framedJson<Out>((await callTool(tool, { query: "rail yard", max_results: 1 })).text);
    expect(serper.requests.at(-1)).toMatchObject({ method: "POST", path: "/images", json: { q: "rail yard", num: 1 } });
    expect(body.results).toEqual([expect.objectContaining({ image_url: "https://images.example.com/solar-dusk.jpg", thumbnail_url: "https://tse.example.com/th?id=solar-dusk" })]);
  });

  it("Brave images: properties.url and thumbnail.src", async () => {
    const tool = createImageSearchTool("brave", { baseUrl: brave.url, apiKey: "brave-key" });
    const body = framedJson<Out>((await callTool(tool, { query: "rail yard" })).text);
    expect(brave.requests.at(-1)).toMatchObject({ path: "/res/v1/images/search", query: { q: "rail yard", count: "5" } });
    expect(body.results.map((r) => r.image_url)).toEqual(["https://images.example.com/solar-dusk.jpg", "https://images.example.com/rail-yard.jpg"]);
  });

  it("errors name the provider: DuckDuckGo without a token, Serper 401 without the key", async () => {
    ddg.fail({ status: 200, contentType: "text/html", body: "<html>no token here</html>" });
    expect((await callTool(createImageSearchTool("ddg", { baseUrl: ddg.url }), { query: "x" })).text).toMatch(/^Error: DuckDuckGo Images did not return a search token/);
    const bad = await callTool(createImageSearchTool("serper", { baseUrl: serper.url, apiKey: "bad-serper-key" }), { query: "x" });
    expect(bad).toMatchObject({ status: "error" });
    expect(bad.text).toMatch(/^Error: Serper rejected the request \(HTTP 403\)/);
    expect(bad.text).not.toContain("bad-serper-key");
  });
});
