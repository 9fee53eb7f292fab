/**
 * Headers of every response that carries a thread's file (artifacts,
 * uploads, workspace): files an agent or a web page put there must never run
 * script on the gateway's origin, where the API (MCP config, skills, memory)
 * answers without credentials.
 */

/** `sandbox` without `allow-same-origin` / `allow-scripts`: a document rendered from it has an opaque origin and runs no script. */
export const FILE_CSP = "sandbox";

/** Headers added to every API response (JSON, SSE and files alike). */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Security-Policy": FILE_CSP,
  "X-Content-Type-Options": "nosniff",
});

/** Text types that are also active documents or scripts in a browser: never served inline. */
const ACTIVE_TEXT = new Set(["text/html", "text/xml", "text/javascript", "text/ecmascript", "text/xsl", "text/vtt"]);

/** Text-like `application/*` types shown as plain text. */
const TEXT_LIKE_APPLICATION = new Set(["application/json", "application/x-ndjson", "application/yaml", "application/toml"]);

/** How one file is served. */
export interface ServedFile {
  /** `inline` only for passive types. */
  disposition: "inline" | "attachment";
  /** The `Content-Type` sent. */
  contentType: string;
}

/**
 * Decide how a file of MIME type `type` is served. Inline only: text (as
 * `text/plain; charset=utf-8`, so no browser renders it as markup), images
 * except SVG, PDF, audio and video. Everything else is an attachment, and
 * active types (HTML, XHTML, XML and any `+xml`, JavaScript) and unknown ones
 * go out as `application/octet-stream`. SVG keeps `image/svg+xml` (as an
 * attachment) so the UI's `<img>` preview can show it: an image element
 * never runs an SVG's script, and opened directly it downloads.
 */
export function servedFile(type: string, download: boolean): ServedFile {
  const t = type.toLowerCase();
  const attachment = (contentType: string): ServedFile => ({ disposition: "attachment", contentType });
  if (t === "image/svg+xml") return attachment(t);
  const active = ACTIVE_TEXT.has(t) || t.endsWith("+xml") || t === "application/xml" || t.includes("javascript") || t.includes("ecmascript");
  if (active) return attachment("application/octet-stream");
  const text = (t.startsWith("text/") || TEXT_LIKE_APPLICATION.has(t)) && !ACTIVE_TEXT.has(t);
  if (text) return { disposition: download ? "attachment" : "inline", contentType: "text/plain; charset=utf-8" };
  const passive = t.startsWith("image/") || t.startsWith("audio/") || t.startsWith("video/") || t === "application/pdf";
  if (passive) return { disposition: download ? "attachment" : "inline", contentType: t };
  // unknown binary, archives, office documents, fonts, wasm: downloads; none of these types is active in a browser
  return attachment(t);
}

/** `Content-Disposition` with an RFC 5987 file name. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  return `${kind}; filename*=UTF-8''${encodeURIComponent(name)}`;
}
