import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

hljs.registerLanguage("bash", bash);
hljs.registerLanguage("css", css);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("json", json);
hljs.registerLanguage("markdown", markdown);
hljs.registerLanguage("python", python);
hljs.registerLanguage("sql", sql);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("xml", xml);
hljs.registerLanguage("yaml", yaml);

const EXT_LANG: Record<string, string> = {
  js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript", ts: "typescript", tsx: "typescript",
  py: "python", sh: "bash", bash: "bash", zsh: "bash", json: "json", css: "css", html: "xml", htm: "xml", xml: "xml",
  svg: "xml", md: "markdown", sql: "sql", yml: "yaml", yaml: "yaml", shell: "bash", html5: "xml",
};

/** Escapes text for HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Maps a fence language or file extension to a registered highlight.js language. */
export function languageFor(langOrExt: string | undefined): string | undefined {
  if (!langOrExt) return undefined;
  const l = langOrExt.toLowerCase();
  if (hljs.getLanguage(l)) return l;
  return EXT_LANG[l];
}

/** Highlights code to HTML (escaped plain text when the language is unknown). */
export function highlightCode(code: string, langOrExt?: string): string {
  const lang = languageFor(langOrExt);
  if (lang) {
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      /* fall back to plain */
    }
  }
  return escapeHtml(code);
}
