/**
 * `json.dumps(value, sort_keys=True, ensure_ascii=False)` as Python writes it,
 * byte for byte: replay keys are sha256 digests of that text, so a fixture
 * recorded by DeerFlow's Python backend only matches when our serialisation is
 * the same (`", "` and `": "` separators, keys in code-point order, non-ASCII
 * kept, control characters as lowercase `\u00xx`, floats in Python's `repr`).
 */

/** Python's `repr(float)`: the shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  // A number JSON.parse gave us without a fraction was a Python int (a float like `2.0` cannot be told apart).
  if (Number.isInteger(x)) return BigInt(x).toString();
  const [mantissa, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || "0"}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp).toString().padStart(2, "0");
  return `${sign}${m}e${exp < 0 ? "-" : "+"}${e}`;
}

const ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/** A JSON string literal as Python's encoder writes it with `ensure_ascii=False`. */
function pythonString(s: string): string {
  return `"${s.replace(/[\u0000-\u001f"\\]/g, (ch) => ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`;
}

/** Compare by Unicode code point (Python's str order), not by UTF-16 unit (JavaScript's default). */
function byCodePoint(a: string, b: string): number {
  const ca = Array.from(a);
  const cb = Array.from(b);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const d = (ca[i].codePointAt(0) ?? 0) - (cb[i].codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

/**
 * Serialise a JSON value as `json.dumps(value, sort_keys=True, ensure_ascii=False)`.
 * `undefined` members of objects are skipped (they never reach Python).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return pythonFloat(value);
  if (typeof value === "string") return pythonString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pythonJsonDumps(v)).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => byCodePoint(a, b));
    return `{${entries.map(([k, v]) => `${pythonString(k)}: ${pythonJsonDumps(v)}`).join(", ")}}`;
  }
  return pythonString(String(value));
}
