import fs from "node:fs";
import path from "node:path";

/**
 * Sanitise an uploaded file name: keep only the base name (both `/` and `\`
 * separators), strip control characters, reject empty, `.`/`..` and hidden
 * (dot-prefixed) names. Returns `undefined` when the name is unusable.
 */
export function sanitizeFilename(raw: string): string | undefined {
  const base = raw.split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (!cleaned || cleaned === "." || cleaned === ".." || cleaned.startsWith(".")) return undefined;
  if (Buffer.byteLength(cleaned, "utf8") > 255) return undefined;
  return cleaned;
}

/** `name.ext` → `name_1.ext`, `name_2.ext`… until the name is free in `dir` and not in `taken`. */
export function dedupeFilename(dir: string, name: string, taken: Set<string> = new Set()): string {
  const exists = (n: string) => taken.has(n) || fs.existsSync(path.join(dir, n));
  if (!exists(name)) return name;
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  for (let i = 1; ; i++) {
    const candidate = `${stem}_${i}${ext}`;
    if (!exists(candidate)) return candidate;
  }
}
