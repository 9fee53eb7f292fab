import { Icon } from "./Icon";
import { useState } from "react";

/** A sidebar entry. */
export interface ThreadEntry {
  thread_id: string;
  title: string;
  updated_at?: string;
}

/** Thread list (newest first) with search, rename and delete. */
export function Sidebar(props: {
  threads: ThreadEntry[];
  activeId?: string;
  error?: string;
  onSelect: (id: string) => void;
  onNew: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
  onRetry: () => void;
}) {
  const { threads, activeId, error, onSelect, onNew, onRename, onDelete, onRetry } = props;
  const [query, setQuery] = useState("");
  const [editing, setEditing] = useState<string | undefined>();
  const [draft, setDraft] = useState("");
  const q = query.trim().toLowerCase();
  const shown = q ? threads.filter((t) => (t.title || "Untitled").toLowerCase().includes(q)) : threads;
  return (
    <nav className="sidebar" aria-label="Conversations">
      <button type="button" className="new-chat" onClick={onNew}>
        <Icon name="plus" /> New chat
      </button>
      <input className="search" type="search" aria-label="Search conversations" placeholder="Search…" value={query} onChange={(e) => setQuery(e.target.value)} />
      {error && (
        <div className="sidebar-error" role="alert">
          {error}{" "}
          <button type="button" onClick={onRetry}>
            Retry
          </button>
        </div>
      )}
      <ul className="thread-list">
        {shown.map((t) => (
          <li key={t.thread_id} className={t.thread_id === activeId ? "active" : ""} data-testid="thread-item" data-thread-id={t.thread_id}>
            {editing === t.thread_id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  setEditing(undefined);
                  if (draft.trim()) onRename(t.thread_id, draft.trim());
                }}
              >
                <input aria-label="New title" autoFocus value={draft} onChange={(e) => setDraft(e.target.value)} onBlur={() => setEditing(undefined)} onKeyDown={(e) => e.key === "Escape" && setEditing(undefined)} />
              </form>
            ) : (
              <>
                <button type="button" className="thread-title" aria-current={t.thread_id === activeId ? "page" : undefined} onClick={() => onSelect(t.thread_id)}>
                  {t.title || "Untitled"}
                </button>
                <button
                  type="button"
                  className="icon"
                  aria-label={`Rename ${t.title || "Untitled"}`}
                  onClick={() => {
                    setDraft(t.title);
                    setEditing(t.thread_id);
                  }}
                >
                  <Icon name="pencil" />
                </button>
                <button
                  type="button"
                  className="icon"
                  aria-label={`Delete ${t.title || "Untitled"}`}
                  onClick={() => {
                    if (confirm(`Delete “${t.title || "Untitled"}”?`)) onDelete(t.thread_id);
                  }}
                >
                  <Icon name="trash" />
                </button>
              </>
            )}
          </li>
        ))}
        {shown.length === 0 && <li className="empty">{q ? "No matching conversations" : "No conversations yet"}</li>}
      </ul>
    </nav>
  );
}
