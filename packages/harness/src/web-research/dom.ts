import { htmlLibs } from "./html-libs";

/**
 * domino's element lists (`querySelectorAll`, `getElementsByTagName`,
 * `children`) are array-like but not iterable, and readability walks them
 * with `for…of`. An iterator over `item(i)` is added to those two list
 * prototypes (domino's own classes, found from a probe document) before the first parse.
 */
function makeListsIterable(): void {
  const probe = htmlLibs().createDocument("<p></p>", true);
  for (const list of [probe.querySelectorAll("p"), probe.body.children]) {
    const proto = Object.getPrototypeOf(list) as object;
    if (proto === Object.prototype || Symbol.iterator in proto) continue;
    Object.defineProperty(proto, Symbol.iterator, {
      configurable: true,
      value: function* (this: { length: number; item(i: number): Element | null }) {
        for (let i = 0; i < this.length; i++) yield this.item(i)!;
      },
    });
  }
}
let iterable = false;

/**
 * An HTML string parsed into a standalone DOM document (no window, no
 * scripts, no network). The web tools use turndown's own DOM implementation
 * (domino) for readability, search-result scraping and conversion, so one
 * DOM library is installed instead of two; it implements the table API
 * (`rows`) the GFM table rule reads.
 */
export function parseHtmlDocument(html: string): Document {
  if (!iterable) {
    makeListsIterable();
    iterable = true;
  }
  // `force`: parse as a full document even when the markup is a fragment
  const document = htmlLibs().createDocument(html, true);
  // domino leaves baseURI unimplemented (it throws) and readability reads it: the page's <base href>, else none.
  // Links are resolved against the page URL while converting (html-to-markdown), not here.
  const base = document.querySelector("base[href]")?.getAttribute("href") ?? null;
  Object.defineProperty(document, "baseURI", { configurable: true, value: base });
  Object.defineProperty(document, "documentURI", { configurable: true, value: null });
  return document;
}
