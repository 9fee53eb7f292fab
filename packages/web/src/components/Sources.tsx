import type { Source } from "../markdown/citations";
import { chipLabel } from "../markdown/citations";

/** The numbered list of an answer's sources (cited first, then pages fetched but not cited). */
export function Sources({ sources }: { sources: Source[] }) {
  if (sources.length === 0) return null;
  return (
    <section className="sources" aria-label="Sources" data-testid="sources">
      <h4>Sources</h4>
      <ol>
        {sources.map((s) => (
          <li key={s.url} className={`source ${s.kind}`}>
            <a href={s.url} target="_blank" rel="noopener noreferrer" title={s.url}>
              {s.title}
            </a>
            <span className="source-site">{chipLabel(s.url, s.title)}</span>
            {s.kind === "fetched" && <span className="source-kind">read, not cited</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}
