import { decodeBody } from "./charset";
import { ToolError } from "../errors";
import { DEFAULT_MAX_CHARS, htmlToMarkdown } from "./html-to-markdown";
import { httpRequest, responseHeader } from "./http-client";
import type { UrlGuard } from "./ssrf-guard";

/** Largest page web_fetch downloads by default (decoded bytes). */
export const DEFAULT_MAX_PAGE_BYTES = 10 * 1024 * 1024;

/** Options of {@link fetchPage}. */
export interface FetchPageOptions {
  guard: UrlGuard;
  timeoutMs: number;
  maxChars?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

/** web_fetch output: DeerFlow's `# {title}\n\n{markdown}`, cut to the budget. */
export interface FetchedPage {
  url: string;
  title: string;
  content: string;
  kind: "html" | "pdf" | "text";
}

function cut(text: string, maxChars: number): string {
  return maxChars > 0 && text.length > maxChars ? text.slice(0, maxChars) : text;
}

function lastPathSegment(url: string): string {
  try {
    const u = new URL(url);
    return decodeURIComponent(u.pathname.split("/").filter(Boolean).pop() ?? u.hostname);
  } catch {
    return url;
  }
}

/** Text of a PDF through unpdf (pdf.js without a worker; loaded on first use). */
export async function pdfToMarkdown(bytes: Uint8Array, url: string, maxChars: number): Promise<{ title: string; content: string }> {
  const { getDocumentProxy, extractText, getMeta } = await import("unpdf");
  let pdf;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes));
  } catch (err) {
    throw new ToolError(`Could not read the PDF at ${url}: ${err instanceof Error ? err.message : String(err)}`, { code: "web_pdf_unreadable" });
  }
  try {
    const meta = await getMeta(pdf).catch(() => undefined);
    const info = (meta?.info ?? {}) as { Title?: unknown };
    const title = (typeof info.Title === "string" && info.Title.trim()) || lastPathSegment(url);
    const { text } = await extractText(pdf, { mergePages: false });
    const pages = (Array.isArray(text) ? text : [text]).map((t) => t.replace(/[ \t]+\n/g, "\n").trim()).filter(Boolean);
    const body = pages.join("\n\n") || "*No text could be extracted from this PDF*";
    return { title, content: cut(`# ${title}\n\n${body}`, maxChars) };
  } finally {
    // The document's own destroy() is gone from pdf.js 5's serverless build; ending its loading task
    // releases the same parser state.
    await pdf.loadingTask.destroy().catch(() => undefined);
  }
}

function isPdf(contentType: string, bytes: Uint8Array): boolean {
  return contentType.includes("application/pdf") || (bytes.length >= 5 && Buffer.from(bytes.subarray(0, 5)).toString("latin1") === "%PDF-");
}

function isHtml(contentType: string, text: string): boolean {
  if (/html|xhtml/.test(contentType)) return true;
  if (contentType && !/^(text\/plain|application\/octet-stream)/.test(contentType)) return false;
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(text.slice(0, 512));
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-yaml|yaml|ld\+json|rss\+xml|atom\+xml|x-ndjson))/;

/**
 * The direct web_fetch provider: GET with a browser user agent, redirects
 * re-checked by the guard, size and time limits, charset detection, then
 * HTML → readable Markdown, PDF → text, text types passed through. HTTP
 * errors and unsupported types are {@link ToolError}s the tool reports.
 */
export async function fetchPage(url: string, opts: FetchPageOptions): Promise<FetchedPage> {
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  const res = await httpRequest(url, {
    guard: opts.guard,
    timeoutMs: opts.timeoutMs,
    maxBytes: opts.maxBytes ?? DEFAULT_MAX_PAGE_BYTES,
    signal: opts.signal,
    headers: { accept: "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5", "accept-language": "en-US,en;q=0.8" },
  });
  if (res.status >= 400) throw new ToolError(`HTTP ${res.status} fetching ${res.url}`, { code: "web_http_status", details: { status: res.status } });
  if (res.status >= 300) throw new ToolError(`Redirect (HTTP ${res.status}) from ${res.url} without a usable Location`, { code: "web_http_status" });
  const contentType = (responseHeader(res, "content-type") ?? "").toLowerCase();
  if (isPdf(contentType, res.body)) {
    const pdf = await pdfToMarkdown(res.body, res.url, maxChars);
    return { url: res.url, title: pdf.title, content: pdf.content, kind: "pdf" };
  }
  const decoded = decodeBody(res.body, contentType);
  if (isHtml(contentType, decoded.text)) {
    const page = htmlToMarkdown(decoded.text, { url: res.url, maxChars });
    return { url: res.url, title: page.title, content: page.formatted, kind: "html" };
  }
  if (!contentType || TEXT_TYPES.test(contentType)) {
    const title = lastPathSegment(res.url);
    return { url: res.url, title, content: cut(`# ${title}\n\n${decoded.text.trim()}`, maxChars), kind: "text" };
  }
  throw new ToolError(`Unsupported content type '${contentType.split(";")[0]}' at ${res.url}: web_fetch reads HTML, PDF and text`, { code: "web_unsupported_type" });
}
