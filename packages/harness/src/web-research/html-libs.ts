import { createRequire } from "node:module";
import type { Readability } from "@mozilla/readability";
import type TurndownService from "turndown";

/** The HTML → Markdown libraries of the web tools. */
export interface HtmlLibs {
  TurndownService: typeof TurndownService;
  gfm: TurndownService.Plugin;
  Readability: typeof Readability;
  createDocument(html: string, force: boolean): Document;
}

const requireLib = createRequire(import.meta.url);
let libs: HtmlLibs | undefined;

/**
 * turndown, its GFM plugin, readability and domino, loaded by the first page
 * conversion (they are CommonJS, so a synchronous require keeps
 * `htmlToMarkdown` synchronous): a gateway that never fetches a page never
 * holds them in memory.
 */
export function htmlLibs(): HtmlLibs {
  if (!libs) {
    const domino = requireLib("@mixmark-io/domino") as { createDocument(html: string, force: boolean): Document };
    libs = {
      TurndownService: requireLib("turndown") as typeof TurndownService,
      gfm: (requireLib("@joplin/turndown-plugin-gfm") as { gfm: TurndownService.Plugin }).gfm,
      Readability: (requireLib("@mozilla/readability") as { Readability: typeof Readability }).Readability,
      createDocument: (html, force) => domino.createDocument(html, force),
    };
  }
  return libs;
}
