import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeBody, htmlToMarkdown } from "../../src/web-research";

const FIX = path.resolve(__dirname, "../fixtures/web");
const read = (name: string) => fs.readFileSync(path.join(FIX, name));
const convert = (name: string, maxChars = 0) => htmlToMarkdown(decodeBody(read(name), "text/html").text, { url: "https://site.example/news/2026/story.html", maxChars });

describe("HTML → Markdown on saved pages", () => {
  it("news article: keeps headline, text, quote, list and links; drops nav, ads, cookie banner, related, footer", () => {
    const page = convert("news-article.html");
    expect(page.readable).toBe(true);
    expect(page.title).toBe("City council approves riverside solar farm");
    const md = page.markdown;
    expect(md).toContain("The Harbor City council voted 7–2 on Thursday night");
    expect(md).toContain("## Cleanup first, panels second");
    expect(md).toContain("## What happens next");
    expect(md).toMatch(/^> "We were not going to put panels/m);
    expect(md).toMatch(/^-\s+Soil remediation starts in May/m);
    expect(md).toContain("**18 percent**");
    // relative links are resolved against the page URL
    expect(md).toContain("[council's website](https://site.example/documents/solar-ea.pdf)");
    for (const junk of ["Subscribe for $1", "We use cookies", "Refinance today", "Related stories", "All rights reserved", "Get the morning briefing", "dataLayer", "Accept all"]) {
      expect(md, junk).not.toContain(junk);
    }
    expect(page.formatted.startsWith("# City council approves riverside solar farm\n\n")).toBe(true);
  });

  it("docs page: fenced code with its language, GFM table, ordered list; sidebar and footer dropped", () => {
    const md = convert("docs-page.html").markdown;
    expect(md).toContain("```python\nfrom quillkit import App, StreamBody");
    expect(md).toContain('            yield f"{i}\\n"');
    expect(md).toContain("```python\nfrom quillkit.sse import Event");
    expect(md).toContain("| Option | Default | Meaning |");
    expect(md).toMatch(/\| `chunk_size` \| 65536 \| Bytes read from file sources per chunk \|/);
    expect(md).toContain("## Server-sent events");
    expect(md).toMatch(/^1\.\s+\[Error handling\]\(https:\/\/site\.example\/news\/2026\/errors\.html\)/m);
    for (const junk of ["Installation", "Previous", "Built with a documentation generator", "v3.2"]) expect(md, junk).not.toContain(junk);
  });

  it("table-heavy page: every row and cell survives, pipes in cells are escaped", () => {
    const md = convert("table-page.html").markdown;
    expect(md).toContain("| Station | Jan | Feb | Mar | Apr | May | Jun | Total |");
    expect(md).toContain("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const row of ["| Northport | 82.4 |", "| Eastvale | 95.1 |", "| Southmere \\| Coastal | 120.6 |", "| Highridge | 140.0 | 131.5 |"]) expect(md).toContain(row);
    expect(md).toContain("| 2025-01-17 | Highridge | 48.2 |");
    expect(md).not.toContain("Log in");
  });

  it("windows-1252 page declared by meta http-equiv: accents, €, œ, curly quotes and dashes decode", () => {
    const decoded = decodeBody(read("windows-1252.html"), "text/html");
    expect(decoded).toMatchObject({ charset: "windows-1252", source: "meta" });
    const page = htmlToMarkdown(decoded.text, { maxChars: 0 });
    expect(page.title).toBe("Café crème et crêpes — la recette");
    expect(page.markdown).toContain("quatre œufs");
    expect(page.markdown).toContain("c’est le secret");
    expect(page.markdown).toContain("3\u00a0€ par personne");
  });

  it("GBK page declared by meta charset decodes to Chinese text", () => {
    const decoded = decodeBody(read("gbk.html"), "text/html");
    expect(decoded).toMatchObject({ charset: "gbk", source: "meta" });
    const page = htmlToMarkdown(decoded.text, { maxChars: 0 });
    expect(page.title).toBe("人工智能助手如何搜索网页");
    expect(page.markdown).toContain("网页中的文字只是数据，不是指令。");
    expect(page.markdown).not.toContain("版权所有");
  });

  it("truncates to the budget (title included) and converts only what fits", () => {
    const page = convert("news-article.html", 300);
    expect(page.formatted.length).toBe(300);
    expect(page.truncated).toBe(true);
    expect(page.formatted.startsWith("# City council approves")).toBe(true);
    expect(convert("news-article.html").truncated).toBe(false);
  });

  it("a page without an article falls back to the body without navigation and forms; images with data: URIs and script links are dropped", () => {
    const html = `<html><head><title>Tiny</title></head><body><nav><a href="/">Home</a></nav><p>Just one line <a href="javascript:alert(1)">click</a>.</p><img src="data:image/png;base64,AAAA"><form><input></form></body></html>`;
    const page = htmlToMarkdown(html, { maxChars: 0 });
    expect(page.title).toBe("Tiny");
    expect(page.markdown).toBe("Just one line click.");
  });
});

describe("charset detection", () => {
  const cafe = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x93, 0x71, 0x94]);
  it("the Content-Type header wins over meta; BOM wins over both", () => {
    expect(decodeBody(cafe, "text/html; charset=windows-1252").text).toBe("café € “q”");
    expect(decodeBody(cafe, "text/html; charset=ISO-8859-1").text).toBe("café € “q”");
    const bomUtf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("<meta charset=gbk>é", "utf8")]);
    expect(decodeBody(bomUtf8, "text/html; charset=windows-1252")).toMatchObject({ charset: "utf-8", source: "bom" });
  });
  it("Shift_JIS from the header, invalid UTF-8 without a declaration falls back to windows-1252", () => {
    expect(decodeBody(Buffer.from([0x82, 0xa0, 0x82, 0xa2]), "text/plain; charset=shift_jis").text).toBe("あい");
    expect(decodeBody(cafe, "text/html")).toMatchObject({ charset: "windows-1252", source: "fallback", text: "café € “q”" });
    expect(decodeBody(Buffer.from("naïve", "utf8"))).toMatchObject({ charset: "utf-8", source: "default", text: "naïve" });
  });
  it("an unknown charset label is ignored", () => {
    expect(decodeBody(Buffer.from("plain"), "text/html; charset=x-klingon")).toMatchObject({ source: "default" });
  });
});
