/**
 * Turning a user message into an FTS5 query: words and numbers, minus
 * function words that would match every fact, each quoted (so user text can
 * never inject FTS syntax) and OR-ed (BM25 then rewards facts sharing more and
 * rarer words with the question).
 */

const STOPWORDS = new Set(
  "a an and are as at be been but by can could did do does doing for from had has have how i i'm im in into is it its it's me my mine of on or our please remember remind said say should so tell than that the their them then there these they this to us was we were what when where which who whom why will with would you your yours user user's about again any know knew".split(" "),
);

/** Distinct lowercased content words of `text` (at most `max`). */
export function contentWords(text: string, max = 32): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'_-]*/gu) ?? [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of words) {
    const w = raw.replace(/'s$/, "").replace(/['_-]+$/g, "");
    if (!w || STOPWORDS.has(w) || seen.has(w) || (w.length < 2 && !/\p{N}|[\u3040-\u9fff\uac00-\ud7a3]/u.test(w))) continue;
    seen.add(w);
    out.push(w);
    if (out.length >= max) break;
  }
  return out;
}

/** An FTS5 MATCH expression for `text`, or null when it has no content words. */
export function ftsQuery(text: string): string | null {
  const words = contentWords(text);
  if (!words.length) return null;
  return words.map((w) => `"${w.replace(/"/g, '""')}"`).join(" OR ");
}

/** Lowercase, collapse spaces and punctuation (entity matching). */
export function normalizeEntity(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}
