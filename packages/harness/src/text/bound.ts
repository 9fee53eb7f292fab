/** Keep head 2/3 and tail of `text` within `cap` chars, joined by `\n...\n`. */
export function boundText(text: string, cap: number): string {
  if (text.length <= cap) return text;
  if (cap <= 0) return "";
  const marker = "\n...\n";
  const head = Math.floor((cap * 2) / 3);
  if (cap <= marker.length) return text.slice(0, cap);
  const tail = Math.max(0, cap - head - marker.length);
  if (tail === 0) return text.slice(0, cap);
  return `${text.slice(0, head)}${marker}${text.slice(text.length - tail)}`;
}
