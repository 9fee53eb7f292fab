import { Icon } from "./Icon";
import { useEffect, useState } from "react";
import { artifactUrl, fetchArtifactText } from "../api/rest";
import { parseCsv } from "../artifacts/csv";
import { baseName, extensionOf, previewKind } from "../artifacts/preview-kind";
import { highlightCode } from "../markdown/highlight";
import { useHighlighter } from "./use-highlighter";
import { Markdown } from "./Markdown";

function Preview({ threadId, path }: { threadId: string; path: string }) {
  const kind = previewKind(path);
  const [state, setState] = useState<{ text?: string; truncated?: boolean; error?: string }>({});
  useEffect(() => {
    setState({});
    if (kind === "image" || kind === "binary") return;
    let live = true;
    fetchArtifactText(threadId, path)
      .then((r) => live && setState(r))
      .catch((e: Error) => live && setState({ error: e.message }));
    return () => {
      live = false;
    };
  }, [threadId, path, kind]);
  // Hooks run on every render, before the early returns below: a code preview re-renders once highlight.js is in.
  useHighlighter(kind === "code");
  const url = artifactUrl(threadId, path);
  if (kind === "image") return <img className="artifact-image" src={url} alt={baseName(path)} />;
  if (kind === "binary") return <p className="muted">No preview for this file type. Use Download.</p>;
  if (state.error) return <p role="alert" className="error">Could not load the file: {state.error}</p>;
  if (state.text === undefined) return <p className="muted">Loading…</p>;
  const note = state.truncated ? <p className="muted">Preview truncated to the first MiB.</p> : null;
  if (kind === "markdown") return <>{note}<Markdown text={state.text} className="artifact-md" /></>;
  if (kind === "html") return <>{note}<iframe className="artifact-html" title={`Preview of ${baseName(path)}`} sandbox="" srcDoc={state.text} /></>;
  if (kind === "csv") {
    const rows = parseCsv(state.text);
    const [head, ...body] = rows;
    return (
      <div className="table-wrap">
        {note}
        <table className="csv">
          {head && (
            <thead>
              <tr>{head.map((c, i) => <th key={i}>{c}</th>)}</tr>
            </thead>
          )}
          <tbody>
            {body.map((r, i) => (
              <tr key={i}>{r.map((c, j) => <td key={j}>{c}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  if (kind === "code") return <>{note}<pre className="code"><code className="hljs" dangerouslySetInnerHTML={{ __html: highlightCode(state.text, extensionOf(path)) }} /></pre></>;
  return <>{note}<pre className="code">{state.text}</pre></>;
}

/** The files the agent presented (`values.artifacts`), with preview and download. */
export function ArtifactsPanel(props: { threadId: string; artifacts: string[]; selected?: string; onSelect: (p?: string) => void; onClose: () => void }) {
  const { threadId, artifacts, selected, onSelect, onClose } = props;
  return (
    <aside className="artifacts" aria-label="Artifacts">
      <header>
        <h2>Files</h2>
        <button type="button" className="icon" aria-label="Close files panel" onClick={onClose}>
          <Icon name="close" />
        </button>
      </header>
      <ul className="artifact-list">
        {artifacts.map((p) => (
          <li key={p} className={p === selected ? "active" : ""} data-testid="artifact-item">
            <button type="button" className="artifact-name" onClick={() => onSelect(p)}>
              <Icon name="file" /> {baseName(p)}
            </button>
            <a className="icon" aria-label={`Download ${baseName(p)}`} href={artifactUrl(threadId, p, true)} download={baseName(p)}>
              <Icon name="download" />
            </a>
          </li>
        ))}
      </ul>
      {selected && (
        <div className="artifact-preview" data-testid="artifact-preview">
          <div className="artifact-preview-head">
            <strong>{baseName(selected)}</strong>
            <a href={artifactUrl(threadId, selected, true)} download={baseName(selected)}>
              Download
            </a>
          </div>
          <Preview threadId={threadId} path={selected} />
        </div>
      )}
    </aside>
  );
}
