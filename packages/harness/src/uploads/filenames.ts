import path from "node:path";

/** Prefix of staging files; hidden from listings because it starts with a dot. */
export const STAGING_PREFIX = ".upload-";
/** Suffix of staging files. */
export const STAGING_SUFFIX = ".part";

const MAX_NAME_BYTES = 255;

/**
 * Sanitise a client-supplied file name: keep only the base name (`/` and `\`
 * are both separators), NFC-normalise unicode, strip control characters and
 * surrounding whitespace. Returns `undefined` for names that cannot be used:
 * empty, `.`, `..`, hidden (dot-prefixed) or longer than 255 UTF-8 bytes.
 */
export function sanitizeUploadFilename(raw: string): string | undefined {
  const base = String(raw ?? "").normalize("NFC").split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  if (!cleaned || cleaned === "." || cleaned === ".." || cleaned.startsWith(".")) return undefined;
  if (Buffer.byteLength(cleaned, "utf8") > MAX_NAME_BYTES) return undefined;
  return cleaned;
}

/**
 * Give `name` a `_N` suffix before its extension until it is not in `taken`
 * (`report.pdf` → `report_1.pdf` → `report_2.pdf`).
 */
export function dedupeFilename(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  for (let i = 1; ; i++) {
    const candidate = `${stem}_${i}${ext}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** True for names listings must hide (dot files, including staging files). */
export function isHiddenName(name: string): boolean {
  return name.startsWith(".");
}
