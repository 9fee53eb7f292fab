/**
 * The web tools inside a real lead agent: a config with DeerFlow's web tool
 * entries (search provider pointed at a local double, web_fetch at a local
 * page server), DeerFlowRuntime building the agent, the scripted model
 * calling web_search then web_fetch, and the tool messages the model gets
 * back after the whole middleware chain.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { messageText } from "../../src/messages";
import { WEB_CONTENT_BEGIN, WEB_CONTENT_END } from "../../src/text";
import { ScriptedModel } from "../../src/testing";
import { startPageServer, startProviderDouble } from "../../src/testing/web-doubles";
import type { WebDouble } from "../../src/testing/web-doubles";
import { tempBase } from "../sandbox/helpers";

const base = tempBase("dfweblead-");
let searx: WebDouble;
let site: WebDouble;
let ddg: WebDouble;

beforeAll(async () => {
  site = await startPageServer({ "/story": { headers: { "content-type": "text/html; charset=utf-8" }, body: fs.readFileSync(path.resolve(__dirname, "../fixtures/web/news-article.html")) } });
  searx = await startProviderDouble("searxng", { results: [{ title: "Riverside solar farm approved", url: `${site.url}/story`, snippet: "The council voted 7–2." }, { title: "Same story again", url: `${site.url}/story#top`, snippet: "dup" }] });
  ddg = await startProviderDouble("ddg");
});
afterAll(async () => {
  await Promise.all([searx.close(), site.close(), ddg.close()]);
  base.cleanup();
});

function writeConfig(dir: string): string {
  const file = path.join(dir, "config.yaml");
  fs.writeFileSync(
    file,
    [
      "models:",
      "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }",
      "sandbox:",
      "  use: local",
      "title:",
      "  enabled: false",
      "tools:",
      "  - name: web_search",
      "    group: web",
      "    use: deerflow.community.searxng.tools:web_search_tool",
      `    base_url: ${searx.url}`,
      "    max_results: 5",
      "  - name: web_fetch",
      "    group: web",
      "    use: web:fetch",
      "    timeout: 5",
      "    max_chars: 3000",
      "    allow_private_addresses: true",
      "  - name: image_search",
      "    group: web",
      "    use: deerflow.community.image_search.tools:image_search_tool",
      `    base_url: ${ddg.url}`,
      "    max_results: 2",
      "  - { name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool }",
      "",
    ].join("\n"),
  );
  return file;
}

describe("web research in the lead agent (DeerFlowRuntime)", () => {
  it("web_search → web_fetch → image_search → answer with citations; the model sees framed, sane tool messages", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "web_search", args: { query: "riverside solar farm vote" } }] },
      { toolCalls: [{ name: "web_fetch", args: { url: `${site.url}/story` } }, { name: "web_fetch", args: { url: "file:///etc/passwd" } }] },
      { toolCalls: [{ name: "image_search", args: { query: "solar farm" } }] },
      `The council approved the farm 7–2 [citation:Riverside solar farm approved](${site.url}/story).`,
    ]);
    const dir = base.dir;
    const rt = await DeerFlowRuntime.open({
      configPath: writeConfig(dir),
      cwd: dir,
      dataDir: path.join(dir, "data"),
      log: () => undefined,
      modelFactory: () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
    });
    try {
      const agent = await rt.buildAgent({ threadId: "web-1" });
      expect(agent.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["web_search", "web_fetch", "image_search", "read_file"]));
      const answer = await new DeerFlowClient(rt).chat("What did the council decide about the solar farm? Cite sources.", { threadId: "web-1" });
      expect(answer).toContain("[citation:Riverside solar farm approved]");

      // 1st tool round: the search results, deduplicated, in SearXNG's DeerFlow shape, framed.
      const searchMsg = model.requests[1]!.messages.find((m) => m.type === "tool" && (m as { name?: string }).name === "web_search")!;
      const searchText = messageText(searchMsg);
      expect(searchText.startsWith(`${WEB_CONTENT_BEGIN}\n`)).toBe(true);
      const hits = JSON.parse(searchText.slice(WEB_CONTENT_BEGIN.length + 1, -(WEB_CONTENT_END.length + 1))) as Array<{ url: string; snippet: string }>;
      expect(hits).toEqual([{ title: "Riverside solar farm approved", url: `${site.url}/story`, snippet: "The council voted 7–2." }]);
      expect(searx.requests.at(-1)!.query).toMatchObject({ q: "riverside solar farm vote", format: "json" });

      // 2nd round: the page as Markdown within max_chars; a file: URL refused with a readable error.
      const round2 = model.requests[2]!.messages.filter((m) => m.type === "tool" && (m as { name?: string }).name === "web_fetch");
      expect(round2).toHaveLength(2);
      const page = messageText(round2[0]);
      expect(page).toContain("# City council approves riverside solar farm");
      expect(page).toContain("## Cleanup first, panels second");
      expect(page).not.toContain("Subscribe for $1");
      expect(page.length).toBeLessThanOrEqual(3000 + WEB_CONTENT_BEGIN.length + WEB_CONTENT_END.length + 2);
      // allow_private_addresses lets this tool reach the 127.0.0.1 test server; schemes stay restricted.
      expect((round2[1] as { status?: string }).status).toBe("error");
      expect(messageText(round2[1])).toMatch(/^Error: Only http:\/\/ and https:\/\/ URLs are supported/);

      // 3rd round: image results with image and thumbnail URLs, internal addresses dropped.
      const images = messageText(model.requests[3]!.messages.find((m) => m.type === "tool" && (m as { name?: string }).name === "image_search")!);
      expect(images).toContain('"image_url": "https://images.example.com/solar-dusk.jpg"');
      expect(images).toContain('"thumbnail_url": "https://tse.example.com/th?id=solar-dusk"');
      expect(images).not.toContain("169.254.169.254");
    } finally {
      await rt.close();
    }
  });
});
