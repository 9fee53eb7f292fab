import type TurndownService from "turndown";
import { parseHtmlDocument } from "./dom";
import { htmlLibs } from "./html-libs";

/** web_fetch's default output budget (DeerFlow truncates the Markdown to 4096 characters). */
export const DEFAULT_MAX_CHARS = 4096;

/** Options of {@link htmlToMarkdown}. */
export interface HtmlToMarkdownOptions {
  /** The page URL: relative links and images are resolved against it (or its `<base href>`). */
  url?: string;
  /**
   * Output budget in characters for `# {title}\n\n{markdown}`. Conversion
   * stops once the budget is filled, so a 1 MB page costs what its first
   * screens cost. 0 converts everything.
   */
  maxChars?: number;
}

/** The main content of a page as Markdown. */
export interface ExtractedPage {
  title: string;
  /** Markdown body without the title heading. */
  markdown: string;
  /** `# {title}\n\n{markdown}`, cut to `maxChars` (DeerFlow's output format). */
  formatted: string;
  truncated: boolean;
  /** True when the readability pass found an article; false when the cleaned body was used. */
  readable: boolean;
}

// Elements that never carry article text, or that the HTML standard marks
// as tangential (aside) or as section chrome (footer). Removing them from
// the source before parsing is the main cost saving on heavy pages (inline
// bundles, icon sprites, mega-menus, link rails): the DOM pays per node
// created. JSON-LD scripts stay because they carry title and byline.
const STRIP_ELEMENTS = /<(script|style|noscript|template|svg|iframe|object|embed|canvas|nav|select|aside|footer|button|textarea)\b([^>]*)>[\s\S]*?<\/\1\s*>/gi;
const COMMENTS = /<!--[\s\S]*?-->/g;
const BOILERPLATE_SELECTOR = "nav, header, footer, aside, form, button, dialog, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true]";
const BLOCK_TAGS = new Set([
  "ADDRESS", "ARTICLE", "ASIDE", "BLOCKQUOTE", "DETAILS", "DIV", "DL", "FIELDSET", "FIGCAPTION", "FIGURE", "FOOTER", "H1", "H2", "H3", "H4", "H5", "H6",
  "HEADER", "HR", "LI", "MAIN", "OL", "P", "PRE", "SECTION", "TABLE", "UL",
]);

/**
 * Markup (after stripping) handed to the parser when an output budget is
 * set. A 4096-character answer never needs more, and it bounds the cost of
 * pathological pages (parsing and readability scale with the node count).
 */
export const BUDGETED_PARSE_LIMIT = 400_000;

function preStrip(html: string, limit = 0): string {
  const stripped = html.replace(COMMENTS, "").replace(STRIP_ELEMENTS, (whole, tag: string, attrs: string) =>
    tag.toLowerCase() === "script" && /application\/ld\+json/i.test(attrs) ? whole : "",
  );
  if (limit <= 0 || stripped.length <= limit) return stripped;
  // Cut after a tag so no element is split mid-attribute; the parser closes what is open.
  const end = stripped.lastIndexOf(">", limit);
  return stripped.slice(0, end > 0 ? end + 1 : limit);
}

let service: TurndownService | undefined;
/** Base URL of the page being converted (conversion is synchronous, so one slot suffices). */
let currentBase: string | undefined;
/** Resolve a link or image reference against the page; Markdown-breaking characters are escaped. */
function resolveRef(ref: string): string {
  let out = ref.trim();
  if (currentBase && out && !out.startsWith("#") && !/^[a-z][a-z0-9+.-]*:/i.test(out)) {
    try {
      out = new URL(out, currentBase).toString();
    } catch {
      // leave unparseable references as they are
    }
  }
  return out.replace(/[()\s]/g, (c) => (c === "(" ? "%28" : c === ")" ? "%29" : "%20"));
}

/** The code language recorded on a `<pre>` (or its `<code>`), if any. */
function codeLanguage(pre: HTMLElement): string {
  const own = pre.getAttribute("data-df-lang");
  if (own) return own;
  const code = pre.firstElementChild;
  return /(?:^|\s)(?:language|lang)-([A-Za-z0-9_+-]+)/.exec(code?.getAttribute("class") ?? "")?.[1] ?? "";
}

/**
 * The shared turndown instance: ATX headings, fenced code with languages,
 * `-` bullets, GFM tables. Links and images are resolved while converting,
 * so only the blocks that fit the budget pay for it.
 */
function turndown(): TurndownService {
  if (service) return service;
  const { TurndownService: Turndown, gfm } = htmlLibs();
  const td = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_", hr: "---" });
  td.use(gfm);
  td.remove(["script", "style", "noscript", "iframe", "button", "input", "select", "textarea", "form"] as TurndownService.Filter);
  td.addRule("fencedPre", {
    filter: "pre",
    replacement: (_content, node) => {
      const pre = node as HTMLElement;
      const code = (pre.textContent ?? "").replace(/\n$/, "");
      const longest = Math.max(2, ...(code.match(/^`{3,}/gm) ?? []).map((f) => f.length));
      const fence = "`".repeat(longest + 1);
      return `\n\n${fence}${codeLanguage(pre)}\n${code}\n${fence}\n\n`;
    },
  });
  td.addRule("resolvedImage", {
    filter: "img",
    replacement: (_content, node) => {
      const el = node as HTMLElement;
      const src = el.getAttribute("src") ?? "";
      // Inline data URIs can be megabytes of base64 and say nothing to a model.
      if (!src || src.startsWith("data:")) return "";
      const alt = (el.getAttribute("alt") ?? "").replace(/[\[\]\n]/g, " ").trim();
      return `![${alt}](${resolveRef(src)})`;
    },
  });
  td.addRule("resolvedLink", {
    filter: (node) => node.nodeName === "A" && !!(node as HTMLElement).getAttribute("href"),
    replacement: (content, node) => {
      const href = (node as HTMLElement).getAttribute("href") ?? "";
      if (/^\s*(javascript|vbscript|data):/i.test(href) || !content.trim()) return content;
      return `[${content}](${resolveRef(href)})`;
    },
  });
  service = td;
  return td;
}

function baseUrlOf(document: Document, pageUrl: string | undefined): string | undefined {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).toString();
  } catch {
    return pageUrl;
  }
}

/** Readability drops classes; keep the code language in a data attribute it preserves. */
function markCodeLanguages(document: Document): void {
  for (const pre of Array.from(document.getElementsByTagName("pre"))) {
    const cls = `${pre.getAttribute("class") ?? ""} ${pre.firstElementChild?.getAttribute("class") ?? ""}`;
    const m = /(?:^|\s)(?:language|lang)-([A-Za-z0-9_+-]+)/.exec(cls);
    if (m) pre.setAttribute("data-df-lang", m[1]);
  }
}

/** The element whose children are the content blocks (skipping single-child wrappers). */
function blockContainer(root: Element): Element {
  let node = root;
  for (;;) {
    const kids = [...node.childNodes].filter((n) => n.nodeType === 1 || (n.nodeType === 3 && n.textContent?.trim()));
    if (kids.length === 1 && kids[0].nodeType === 1 && ["DIV", "ARTICLE", "SECTION", "MAIN"].includes(kids[0].nodeName)) node = kids[0] as Element;
    else return node;
  }
}

/**
 * Convert content blocks until `budget` characters are produced. Runs of
 * inline nodes are converted together so a sentence is not split apart.
 */
function convertBlocks(container: Element, budget: number): { markdown: string; complete: boolean } {
  const td = turndown();
  const doc = container.ownerDocument;
  const parts: string[] = [];
  let length = 0;
  let inline: ChildNode[] = [];
  const flush = () => {
    if (!inline.length) return;
    const p = doc.createElement("p");
    for (const n of inline) p.appendChild(n.cloneNode(true));
    inline = [];
    const md = td.turndown(p as unknown as TurndownService.Node).trim();
    if (md) {
      parts.push(md);
      length += md.length + 2;
    }
  };
  const nodes = [...container.childNodes];
  for (let i = 0; i < nodes.length; i++) {
    if (budget > 0 && length >= budget) return { markdown: parts.join("\n\n"), complete: false };
    const n = nodes[i];
    if (n.nodeType === 1 && BLOCK_TAGS.has(n.nodeName)) {
      flush();
      if (budget > 0 && length >= budget) return { markdown: parts.join("\n\n"), complete: false };
      // Turndown converts the children of the node it is given, so a block
      // is handed over inside a wrapper for its own rule (heading, table…) to apply.
      const wrap = doc.createElement("div");
      wrap.appendChild(n);
      const md = td.turndown(wrap as unknown as TurndownService.Node).trim();
      if (md) {
        parts.push(md);
        length += md.length + 2;
      }
    } else if (n.nodeType === 1 || n.nodeType === 3) {
      inline.push(n);
    }
  }
  flush();
  return { markdown: parts.join("\n\n"), complete: true };
}

function tidy(markdown: string): string {
  return markdown.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
}

/**
 * HTML → main content → Markdown: scripts, styles and embeds are stripped,
 * a readability pass keeps the article (navigation, ads, footers and
 * boilerplate go), and turndown writes headings, lists, links, GFM tables
 * and fenced code. Pages where no article is found fall back to the body
 * without navigation, header, footer, aside and forms.
 */
export function htmlToMarkdown(html: string, options: HtmlToMarkdownOptions = {}): ExtractedPage {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const source = preStrip(html, maxChars > 0 ? BUDGETED_PARSE_LIMIT : 0);
  const document = parseHtmlDocument(source);
  const base = baseUrlOf(document as unknown as Document, options.url);
  const fallbackTitle = (document.querySelector("title")?.textContent ?? "").trim();
  markCodeLanguages(document as unknown as Document);
  let root: Element | null = null;
  let title = "";
  let readable = false;
  try {
    const article = new (htmlLibs().Readability)(document as unknown as Document, { serializer: (el: Node) => el as Element, charThreshold: 300 }).parse();
    if (article?.content && (article.textContent ?? "").trim().length > 0) {
      root = article.content as unknown as Element;
      title = (article.title ?? "").trim();
      readable = true;
    }
  } catch {
    // A page readability cannot handle still gets the cleaned-body treatment.
  }
  if (!root) {
    // Readability mutates the document; parse again for the fallback.
    const fresh = parseHtmlDocument(source);
    for (const el of Array.from(fresh.querySelectorAll(BOILERPLATE_SELECTOR))) el.remove();
    root = (fresh.body ?? fresh.documentElement) as unknown as Element;
  }
  title = title || fallbackTitle || "Untitled";
  const heading = `# ${title}\n\n`;
  const budget = maxChars > 0 ? Math.max(0, maxChars - heading.length) : 0;
  currentBase = base;
  let converted: { markdown: string; complete: boolean };
  try {
    converted = convertBlocks(blockContainer(root), budget);
  } finally {
    currentBase = undefined;
  }
  const { markdown: raw, complete } = converted;
  const markdown = tidy(raw) || "*No content available*";
  const full = heading + markdown;
  const cut = maxChars > 0 && full.length > maxChars;
  return { title, markdown, formatted: cut ? full.slice(0, maxChars) : full, truncated: cut || !complete, readable };
}
