/**
 * Charset detection for fetched documents, in the HTML standard's order of
 * authority: byte-order mark, then the `Content-Type` header, then a
 * `<meta charset>` / `<meta http-equiv>` / XML declaration in the first
 * bytes, then UTF-8 (falling back to windows-1252 when the bytes are not
 * valid UTF-8, as browsers do for legacy pages).
 */

/** Where the charset came from. */
export type CharsetSource = "bom" | "header" | "meta" | "default" | "fallback";

/** A decoded document. */
export interface DecodedText {
  text: string;
  /** The WHATWG encoding name used (e.g. `utf-8`, `windows-1252`, `gbk`). */
  charset: string;
  source: CharsetSource;
}

const META_SCAN_BYTES = 4096;

// Node 20's TextDecoder treats windows-1252 (and its aliases latin1,
// iso-8859-1, ascii) as ISO-8859-1, so 0x80–0x9F come out as C1 control
// characters instead of € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ.
// This table restores them (undefined bytes keep their C1 value, as in the standard).
const CP1252_HIGH = "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  return latin1.replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]);
}

/** Decode `bytes` with a WHATWG encoding name (windows-1252 handled by hand, see above). */
export function decodeWith(charset: string, bytes: Uint8Array): string {
  return charset === "windows-1252" ? decodeWindows1252(bytes) : new TextDecoder(charset).decode(bytes);
}

/** The WHATWG name for a charset label, or undefined when the runtime does not support it. */
export function normalizeCharset(label: string | undefined): string | undefined {
  if (!label) return undefined;
  const clean = label.trim().replace(/^["']|["']$/g, "").toLowerCase();
  if (!clean) return undefined;
  try {
    return new TextDecoder(clean).encoding;
  } catch {
    return undefined;
  }
}

/** The `charset=` parameter of a Content-Type header. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? "");
  return m ? m[2] : undefined;
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

/** A charset declared in the document's first bytes (meta charset, http-equiv, XML declaration). */
export function sniffDeclaredCharset(bytes: Uint8Array): string | undefined {
  // Declarations are ASCII, so latin1 decoding of the prefix is lossless for them.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, META_SCAN_BYTES)).toString("latin1");
  const xml = /^\s*<\?xml[^>]*\sencoding\s*=\s*["']([^"']+)["']/i.exec(head);
  if (xml) return xml[1];
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const direct = /\bcharset\s*=\s*["']?\s*([^"'\s/>;]+)/i.exec(tag);
    if (direct && !/http-equiv/i.test(tag)) return direct[1];
    if (/http-equiv\s*=\s*["']?content-type/i.test(tag)) {
      const content = /\bcontent\s*=\s*(["'])([^"']*)\1/i.exec(tag);
      const cs = charsetFromContentType(content?.[2]);
      if (cs) return cs;
    }
  }
  return undefined;
}

/** Decode a fetched body to text (see the module comment for the order). */
export function decodeBody(bytes: Uint8Array, contentType?: string): DecodedText {
  const bom = bomCharset(bytes);
  if (bom) return { text: new TextDecoder(bom).decode(bytes), charset: bom, source: "bom" };
  const fromHeader = normalizeCharset(charsetFromContentType(contentType));
  if (fromHeader) return { text: decodeWith(fromHeader, bytes), charset: fromHeader, source: "header" };
  const fromMeta = normalizeCharset(sniffDeclaredCharset(bytes));
  // A page cannot declare itself UTF-16 in ASCII-compatible bytes; the standard maps that to UTF-8.
  if (fromMeta && !fromMeta.startsWith("utf-16")) return { text: decodeWith(fromMeta, bytes), charset: fromMeta, source: "meta" };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), charset: "utf-8", source: "default" };
  } catch {
    return { text: decodeWindows1252(bytes), charset: "windows-1252", source: "fallback" };
  }
}
