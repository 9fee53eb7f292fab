/**
 * Markdown (what the agent writes) in each platform's message format, and
 * long replies split at a platform's limit without cutting a code block or a
 * formatting tag in two.
 */

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Code spans and blocks are taken out first so nothing inside them is formatted. */
function withCodeProtected(markdown: string, inline: (text: string) => string, block: (code: string, lang: string) => string, span: (code: string) => string): string {
  const parts: string[] = [];
  const re = /```([\w+-]*)\n?([\s\S]*?)(?:```|$)|`([^`\n]+)`/g;
  let last = 0;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) {
    parts.push(inline(markdown.slice(last, m.index)));
    parts.push(m[3] !== undefined ? span(m[3]) : block((m[2] ?? "").replace(/\n$/, ""), m[1] ?? ""));
    last = re.lastIndex;
    if (m[0].length === 0) re.lastIndex++;
  }
  parts.push(inline(markdown.slice(last)));
  return parts.join("");
}

/** Markdown → Telegram's HTML parse mode (`parse_mode: "HTML"`). */
export function markdownToTelegramHtml(markdown: string): string {
  const inline = (raw: string): string =>
    raw
      .split("\n")
      .map((line) => {
        let l = escapeHtml(line);
        const heading = /^#{1,6}\s+(.*)$/.exec(l);
        if (heading) l = `<b>${heading[1]}</b>`;
        l = l.replace(/^(\s*)[-*+]\s+/, "$1• ");
        l = l.replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, (_m, t: string, u: string) => `<a href="${u.replace(/"/g, "&quot;")}">${t}</a>`);
        l = l.replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_m, a?: string, b?: string) => `<b>${a ?? b}</b>`);
        l = l.replace(/(^|[^\w*])\*([^*\s][^*]*)\*(?!\w)/g, "$1<i>$2</i>").replace(/(^|[^\w])_([^_\s][^_]*)_(?!\w)/g, "$1<i>$2</i>");
        l = l.replace(/~~([^~]+)~~/g, "<s>$1</s>");
        return l;
      })
      .join("\n");
  return withCodeProtected(
    markdown,
    inline,
    (code, lang) => (lang ? `<pre><code class="language-${escapeHtml(lang)}">${escapeHtml(code)}</code></pre>` : `<pre>${escapeHtml(code)}</pre>`),
    (code) => `<code>${escapeHtml(code)}</code>`,
  );
}

/** Markdown → Slack's mrkdwn. */
export function markdownToSlackMrkdwn(markdown: string): string {
  const inline = (raw: string): string =>
    raw
      .split("\n")
      .map((line) => {
        let l = line.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
        const heading = /^#{1,6}\s+(.*)$/.exec(l);
        if (heading) l = `*${heading[1]}*`;
        l = l.replace(/^(\s*)[-*+]\s+/, "$1• ");
        l = l.replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, "<$2|$1>");
        // italics first, so the bold produced next is not read as italics
        l = l.replace(/(^|[^\w*])\*([^*\s][^*]*)\*(?!\w)/g, "$1_$2_");
        l = l.replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_m, a?: string, b?: string) => `*${a ?? b}*`);
        l = l.replace(/~~([^~]+)~~/g, "~$1~");
        return l;
      })
      .join("\n");
  return withCodeProtected(markdown, inline, (code) => "```\n" + code + "\n```", (code) => "`" + code + "`");
}

/**
 * Split Markdown into pieces whose formatted text fits `limit`: at blank
 * lines, then lines, then words; a code block cut in two is closed and
 * reopened so each piece renders on its own.
 */
export function splitMarkdown(markdown: string, limit: number, format: (md: string) => string = (s) => s): string[] {
  if (format(markdown).length <= limit) return [markdown];
  const out: string[] = [];
  let current = "";
  let fence: string | null = null;
  const fits = (md: string) => format(fence ? `${md}\n\`\`\`` : md).length <= limit;
  const flush = () => {
    if (!current) return;
    out.push(fence ? `${current}\n\`\`\`` : current);
    current = fence ? fence : "";
  };
  for (const line of markdown.split("\n")) {
    const candidate = current ? `${current}\n${line}` : line;
    if (fits(candidate)) current = candidate;
    else {
      flush();
      let rest = line;
      // one line longer than the limit: cut it at word boundaries (or hard, for a word that long)
      while (!fits(current ? `${current}\n${rest}` : rest)) {
        let cut = rest.length;
        while (cut > 1 && !fits((current ? `${current}\n` : "") + rest.slice(0, cut))) cut = Math.floor(cut * 0.8);
        const space = rest.lastIndexOf(" ", cut);
        if (space > cut / 2) cut = space;
        current = (current ? `${current}\n` : "") + rest.slice(0, cut);
        rest = rest.slice(cut).replace(/^ /, "");
        flush();
      }
      current = current ? `${current}\n${rest}` : rest;
    }
    if (/^```/.test(line.trim())) fence = fence ? null : line.trim();
  }
  if (current) out.push(current);
  return out.filter((p) => p.trim() !== "" && p.trim() !== fence);
}
