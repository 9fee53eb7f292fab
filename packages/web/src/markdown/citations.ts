/**
 * Citations in answers. The lead agent's prompt asks for inline
 * `[citation:Title](URL)` links; they render as compact source chips (the
 * site name, the title on hover) and the sources of an answer are listed
 * under it.
 */
import type { AssistantPart } from "../stream/groups";

/** One cited or fetched source. */
export interface Source {
  title: string;
  url: string;
  /** `cited` in the answer text, or only `fetched` by web_fetch during the run. */
  kind: "cited" | "fetched";
}

const CITATION_RE = /\[citation:([^\]]*)\]\(\s*<?(https?:\/\/[^\s)>]+)>?\s*\)/g;

/** True for a link text written as `citation:Title`. */
export function isCitationText(text: string): boolean {
  return /^citation:/i.test(text.trim());
}

/** The label a chip shows: the site name without `www.`, or the title when the URL does not parse. */
export function chipLabel(url: string, title: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, "");
  } catch {
    return title || url;
  }
}

/** Citations in a Markdown text, in order, one per URL. */
export function extractCitations(text: string): Source[] {
  const out: Source[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(CITATION_RE)) {
    const url = m[2];
    if (seen.has(url)) continue;
    seen.add(url);
    out.push({ title: m[1].trim() || chipLabel(url, ""), url, kind: "cited" });
  }
  return out;
}

/**
 * The sources of one assistant turn: every citation in its answer text,
 * then pages web_fetch read successfully that the answer did not cite.
 */
export function collectSources(parts: readonly AssistantPart[]): Source[] {
  const cited = parts.flatMap((p) => (p.kind === "text" ? extractCitations(p.text) : []));
  const seen = new Set(cited.map((s) => s.url));
  const out = [...cited.filter((s, i) => cited.findIndex((o) => o.url === s.url) === i)];
  for (const p of parts) {
    if (p.kind !== "tool" || p.step.name !== "web_fetch" || p.step.status !== "success") continue;
    const url = typeof p.step.args.url === "string" ? p.step.args.url : "";
    if (!/^https?:\/\//.test(url) || seen.has(url)) continue;
    seen.add(url);
    const title = /^#\s+(.+)$/m.exec(p.step.result ?? "")?.[1]?.trim() ?? chipLabel(url, url);
    out.push({ title, url, kind: "fetched" });
  }
  return out;
}
