import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { chipLabel, isCitationText } from "./citations";
import { escapeHtml, highlightCode } from "./highlight";
import { loadedKatex } from "./math";

function renderMath(tex: string, display: boolean): string {
  const k = loadedKatex();
  if (!k) return `<span class="math-pending">${escapeHtml(display ? `$$${tex}$$` : `$${tex}$`)}</span>`;
  try {
    return k.renderToString(tex, { displayMode: display, throwOnError: false });
  } catch {
    return `<code>${escapeHtml(tex)}</code>`;
  }
}

const marked = new Marked({ gfm: true, breaks: false });
marked.use({
  extensions: [
    {
      name: "mathBlock",
      level: "block",
      start: (src: string) => src.indexOf("$$"),
      tokenizer(src: string) {
        const m = /^\$\$([\s\S]+?)\$\$\s*(?:\n|$)/.exec(src);
        if (m) return { type: "mathBlock", raw: m[0], text: m[1].trim() };
        return undefined;
      },
      renderer: (tok) => `<div class="math-block">${renderMath((tok as Tokens.Generic).text as string, true)}</div>`,
    },
    {
      name: "mathInline",
      level: "inline",
      start: (src: string) => src.indexOf("$"),
      tokenizer(src: string) {
        const m = /^\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\d)/.exec(src);
        if (m) return { type: "mathInline", raw: m[0], text: m[1] };
        return undefined;
      },
      renderer: (tok) => renderMath((tok as Tokens.Generic).text as string, false),
    },
  ],
  renderer: {
    // `[citation:Title](URL)` becomes a compact source chip; other links render as usual.
    link({ href, text }: Tokens.Link) {
      if (!isCitationText(text) || !/^https?:\/\//i.test(href)) return false;
      const title = text.trim().replace(/^citation:/i, "").trim();
      return `<a class="citation-chip" href="${escapeHtml(href)}" title="${escapeHtml(title || href)}">${escapeHtml(chipLabel(href, title))}</a>`;
    },
    code({ text, lang }: Tokens.Code) {
      const language = (lang ?? "").split(/\s+/)[0];
      return `<pre class="code"><code class="hljs${language ? ` language-${escapeHtml(language)}` : ""}">${highlightCode(text, language)}</code></pre>`;
    },
  },
});

/** True when the text contains something that looks like TeX math. */
export function hasMath(text: string): boolean {
  return /\$\$[\s\S]+?\$\$|\$(?!\s)[^$\n]+?(?<!\s)\$/.test(text);
}

let hooked = false;
function purifier(): typeof DOMPurify {
  if (!hooked && typeof DOMPurify.addHook === "function") {
    hooked = true;
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.getAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
  }
  return DOMPurify;
}

/** Raw (unsanitised) Markdown → HTML; only for tests and for feeding {@link renderMarkdown}. */
export function markdownToHtml(text: string): string {
  return marked.parse(text, { async: false }) as string;
}

/**
 * Markdown → sanitised HTML. Everything the model or a file says goes through DOMPurify
 * (scripts, event handlers, javascript: URLs and iframes are removed).
 */
export function renderMarkdown(text: string): string {
  const html = markdownToHtml(text);
  return purifier().sanitize(html, { FORBID_TAGS: ["style", "iframe", "form", "object", "embed"], ADD_ATTR: ["target"] }) as string;
}
