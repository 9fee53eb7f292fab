import { useCallback, useEffect, useState } from "react";
import { clearMemory, createFact, deleteFact, getMemory, getMemorySettings, previewRecall, setMemoryEnabled, updateFact } from "../api/memory";
import type { MemoryData, MemoryFact, RecallResult } from "../api/memory";
import { ErrorBanner } from "../components/ErrorBanner";

/** Props of {@link MemoryPage}. */
export interface MemoryPageProps {
  /** Leave the page. */
  onClose(): void;
}

const SECTION_LABEL: Array<[keyof MemoryData["user"] | keyof MemoryData["history"], string, "user" | "history"]> = [
  ["workContext", "Work", "user"],
  ["personalContext", "Personal", "user"],
  ["topOfMind", "Current focus", "user"],
  ["recentMonths", "Recent months", "history"],
  ["earlierContext", "Earlier", "history"],
  ["longTermBackground", "Background", "history"],
];
const CATEGORIES = ["preference", "knowledge", "context", "behavior", "goal", "correction"];

/** The "remembered: …" line for a turn, from the facts the run injected. */
export function RememberedNote({ facts }: { facts: Array<{ content: string }> }) {
  if (!facts.length) return null;
  return (
    <p className="muted remembered" data-testid="remembered">
      remembered: {facts.map((f) => f.content).join(" · ")}
    </p>
  );
}

function FactRow({ fact, busy, onSave, onDelete }: { fact: MemoryFact; busy: boolean; onSave(patch: Partial<MemoryFact>): void; onDelete(): void }) {
  const [editing, setEditing] = useState(false);
  const [content, setContent] = useState(fact.content);
  const [category, setCategory] = useState(fact.category);
  const [confidence, setConfidence] = useState(String(fact.confidence));
  if (editing) {
    return (
      <li className="memory-fact editing" data-testid="memory-fact" data-fact={fact.id}>
        <input aria-label="Fact content" value={content} onChange={(e) => setContent(e.target.value)} style={{ flex: 1 }} />
        <select aria-label="Fact category" value={category} onChange={(e) => setCategory(e.target.value)}>
          {[...new Set([...CATEGORIES, fact.category])].map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
        <input aria-label="Fact confidence" type="number" min={0} max={1} step={0.05} value={confidence} onChange={(e) => setConfidence(e.target.value)} style={{ width: 70 }} />
        <button
          type="button"
          disabled={busy || !content.trim()}
          onClick={() => {
            onSave({ content: content.trim(), category, confidence: Number(confidence) });
            setEditing(false);
          }}
        >
          Save
        </button>
        <button type="button" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </li>
    );
  }
  return (
    <li className="memory-fact" data-testid="memory-fact" data-fact={fact.id} style={{ display: "flex", gap: 8, alignItems: "center" }}>
      <span className="chip">{fact.category}</span>
      <span style={{ flex: 1 }}>
        {fact.content}
        {fact.sourceError && <span className="muted"> (avoid: {fact.sourceError})</span>}
      </span>
      <span className="muted" title="confidence">
        {fact.confidence.toFixed(2)}
      </span>
      <button type="button" disabled={busy} onClick={() => setEditing(true)} aria-label={`Edit fact ${fact.content}`}>
        Edit
      </button>
      <button type="button" disabled={busy} onClick={onDelete} aria-label={`Delete fact ${fact.content}`}>
        Delete
      </button>
    </li>
  );
}

/** Memory: the profile summaries, the facts (add, edit, delete), a recall preview, and the per-user off switch. */
export function MemoryPage({ onClose }: MemoryPageProps) {
  const [memory, setMemory] = useState<MemoryData | undefined>();
  const [enabled, setEnabled] = useState<boolean | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState({ content: "", category: "preference", confidence: "0.9" });
  const [query, setQuery] = useState("");
  const [recall, setRecall] = useState<RecallResult | undefined>();

  const refresh = useCallback(async () => {
    try {
      const [m, s] = await Promise.all([getMemory(), getMemorySettings()]);
      setMemory(m);
      setEnabled(s.enabled);
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const act = async (fn: () => Promise<MemoryData | void>) => {
    setBusy(true);
    try {
      const next = await fn();
      if (next) setMemory(next);
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const sections = SECTION_LABEL.map(([key, label, group]) => ({ key, label, summary: memory ? (memory[group] as Record<string, { summary: string }>)[key]?.summary ?? "" : "" })).filter((s) => s.summary);

  return (
    <main className="memory-page" aria-label="Memory">
      <div className="topbar">
        <h1 className="title">Memory</h1>
        <label className="toggle">
          <input
            type="checkbox"
            aria-label="Memory on"
            checked={enabled ?? false}
            disabled={enabled === undefined || busy}
            onChange={() =>
              void act(async () => {
                setEnabled((await setMemoryEnabled(!enabled)).enabled);
              })
            }
          />
          {enabled ? "On: remembers and recalls" : "Off: nothing is remembered or recalled"}
        </label>
        <button
          type="button"
          disabled={busy || !memory?.facts.length}
          onClick={() => {
            if (window.confirm("Forget everything remembered about you?")) void act(() => clearMemory());
          }}
        >
          Clear all
        </button>
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <div style={{ padding: "8px 16px", display: "grid", gap: 16 }}>
        <section aria-label="Profile">
          <h2>Profile</h2>
          {sections.length === 0 ? (
            <p className="muted">Nothing summarised yet. The profile fills in as you talk.</p>
          ) : (
            <dl data-testid="memory-profile">
              {sections.map((s) => (
                <div key={s.key}>
                  <dt>
                    <strong>{s.label}</strong>
                  </dt>
                  <dd>{s.summary}</dd>
                </div>
              ))}
            </dl>
          )}
        </section>
        <section aria-label="Facts">
          <h2>Facts {memory && <span className="muted">({memory.facts.length})</span>}</h2>
          <form
            style={{ display: "flex", gap: 8 }}
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => {
                const next = await createFact({ content: draft.content.trim(), category: draft.category, confidence: Number(draft.confidence) });
                setDraft({ ...draft, content: "" });
                return next;
              });
            }}
          >
            <input aria-label="New fact" placeholder="Something to remember about you" value={draft.content} onChange={(e) => setDraft({ ...draft, content: e.target.value })} style={{ flex: 1 }} />
            <select aria-label="New fact category" value={draft.category} onChange={(e) => setDraft({ ...draft, category: e.target.value })}>
              {CATEGORIES.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
            <button type="submit" disabled={busy || !draft.content.trim()}>
              Add fact
            </button>
          </form>
          {memory && memory.facts.length === 0 && <p className="muted">No facts yet.</p>}
          <ul style={{ listStyle: "none", padding: 0, display: "grid", gap: 6 }}>
            {(memory?.facts ?? []).map((f) => (
              <FactRow key={`${f.id}:${f.content}:${f.confidence}:${f.category}`} fact={f} busy={busy} onSave={(patch) => void act(() => updateFact(f.id, patch))} onDelete={() => void act(() => deleteFact(f.id))} />
            ))}
          </ul>
        </section>
        <section aria-label="Recall preview">
          <h2>What would be recalled?</h2>
          <form
            style={{ display: "flex", gap: 8 }}
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => setRecall(await previewRecall(query)));
            }}
          >
            <input aria-label="Question" placeholder="Ask something as you would in a chat" value={query} onChange={(e) => setQuery(e.target.value)} style={{ flex: 1 }} />
            <button type="submit" disabled={busy || !query.trim()}>
              Preview
            </button>
          </form>
          {recall && (
            <div data-testid="recall-preview">
              <RememberedNote facts={recall.facts.filter((f) => f.relevant)} />
              <p className="muted">
                {recall.factIds.length} facts in the block ({recall.tokens} tokens, ranked by {recall.ranking}).
              </p>
            </div>
          )}
        </section>
      </div>
    </main>
  );
}
