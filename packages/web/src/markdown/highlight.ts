/**
 * Code highlighting, loaded lazily: until highlight.js has arrived a code block is escaped plain text, and
 * every renderer that asked re-renders once it is there (as KaTeX in `math.ts`).
 */

type Highlighter = {
  getLanguage(name: string): unknown;
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
};

let hljs: Highlighter | undefined;
let loading: Promise<void> | undefined;
const waiters = new Set<() => void>();

/** What `highlight-languages.ts` registers, and the aliases and file extensions that map to it. */
const LANGUAGES = new Set(["bash", "css", "javascript", "json", "markdown", "python", "sql", "typescript", "xml", "yaml"]);
const EXT_LANG: Record<string, string> = {
  js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript", ts: "typescript", tsx: "typescript",
  py: "python", sh: "bash", bash: "bash", zsh: "bash", json: "json", css: "css", html: "xml", htm: "xml", xml: "xml",
  svg: "xml", md: "markdown", sql: "sql", yml: "yaml", yaml: "yaml", shell: "bash", html5: "xml",
};

/** Escapes text for HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Maps a fence language or file extension to a highlighted language. */
export function languageFor(langOrExt: string | undefined): string | undefined {
  if (!langOrExt) return undefined;
  const l = langOrExt.toLowerCase();
  if (LANGUAGES.has(l) || (hljs && hljs.getLanguage(l))) return l;
  return EXT_LANG[l];
}

/** The loaded highlighter, if any. */
export function loadedHighlighter(): Highlighter | undefined {
  return hljs;
}

/** Loads highlight.js once (resolves when it is there, or when loading failed: code then stays plain). */
export function loadHighlighter(): Promise<void> {
  loading ??= import("./highlight-languages")
    .then((mod) => {
      hljs = mod.default as unknown as Highlighter;
      for (const w of waiters) w();
      waiters.clear();
    })
    .catch(() => {
      loading = undefined;
    });
  return loading;
}

/** Starts loading highlight.js; `onReady` is called when it is available. */
export function requestHighlighter(onReady?: () => void): void {
  if (hljs) return;
  if (onReady) waiters.add(onReady);
  void loadHighlighter();
}

/** Removes a waiter (component unmounted). */
export function cancelHighlighterWaiter(fn: () => void): void {
  waiters.delete(fn);
}

/** True when Markdown text has a fenced code block (the only kind that names a language). */
export function hasCodeFence(text: string): boolean {
  return /^ {0,3}(```|~~~)/m.test(text);
}

/** Highlights code to HTML (escaped plain text when the language is unknown or highlight.js is not loaded yet). */
export function highlightCode(code: string, langOrExt?: string): string {
  const lang = languageFor(langOrExt);
  if (lang && hljs) {
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      /* fall back to plain */
    }
  }
  return escapeHtml(code);
}
