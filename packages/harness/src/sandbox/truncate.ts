/**
 * Output truncation helpers with DeerFlow's markers. Every helper returns at
 * most `maxChars` characters; `maxChars = 0` disables truncation.
 */

/** Middle-truncate (keep head and tail) — used for bash output. */
export function truncateMiddle(output: string, maxChars: number): string {
  if (maxChars <= 0 || output.length <= maxChars) return output;
  const total = output.length;
  const markerMax = `\n... [middle truncated: ${total} chars skipped] ...\n`.length;
  const kept = Math.max(0, maxChars - markerMax);
  if (kept === 0) return output.slice(0, maxChars);
  const head = Math.floor(kept / 2);
  const tail = kept - head;
  const marker = `\n... [middle truncated: ${total - kept} chars skipped] ...\n`;
  return output.slice(0, head) + marker + (tail > 0 ? output.slice(total - tail) : "");
}

function truncateHead(output: string, maxChars: number, hint: string): string {
  if (maxChars <= 0 || output.length <= maxChars) return output;
  const total = output.length;
  const markerMax = `\n... [truncated: showing first ${total} of ${total} chars. ${hint}] ...`.length;
  const kept = Math.max(0, maxChars - markerMax);
  if (kept === 0) return output.slice(0, maxChars);
  return `${output.slice(0, kept)}\n... [truncated: showing first ${kept} of ${total} chars. ${hint}] ...`;
}

/** Head-truncate read_file output. */
export function truncateReadFile(output: string, maxChars: number): string {
  return truncateHead(output, maxChars, "Use start_line/end_line to read a specific range");
}

/** Head-truncate ls output. */
export function truncateLs(output: string, maxChars: number): string {
  return truncateHead(output, maxChars, "Use a more specific path to see fewer results");
}
