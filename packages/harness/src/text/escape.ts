/**
 * Escaping of text that enters a prompt, a data block or a rendered section
 * as data. One implementation for every caller, because the rule is a
 * security rule: a value that could close or open a tag must not.
 */

const AMP = /&/g;
const LT = /</g;
const GT = />/g;

/**
 * Escape `&`, `<` and `>` (Python's `html.escape(s, quote=False)`), so the
 * text reads as literal data inside a tagged block: `</memory>` becomes
 * `&lt;/memory&gt;`. `&` goes first, so existing entities are escaped too and
 * the result cannot be unescaped into a tag by a later pass.
 */
export function escapeXmlText(text: string): string {
  return text.replace(AMP, "&amp;").replace(LT, "&lt;").replace(GT, "&gt;");
}

/** {@link escapeXmlText} applied to every string inside a JSON-like value (keys unchanged). */
export function escapeXmlTextDeep(value: unknown): unknown {
  if (typeof value === "string") return escapeXmlText(value);
  if (Array.isArray(value)) return value.map(escapeXmlTextDeep);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeXmlTextDeep(v)]));
  return value;
}
