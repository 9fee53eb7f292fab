import { Icon } from "./Icon";
import { useEffect, useRef, useState } from "react";
import type { ViewItem } from "../stream/groups";
import { ClarificationCard } from "./ClarificationCard";
import { Markdown } from "./Markdown";
import { ToolStepView } from "./ToolStepView";
import { SubagentCard } from "./SubagentCard";
import { Sources } from "./Sources";
import { RememberedNote } from "../pages/MemoryPage";
import { collectSources } from "../markdown/citations";

/** The conversation: human bubbles, assistant turns (reasoning, text, tool steps) and clarification cards. */
export function MessageList(props: {
  items: ViewItem[];
  streaming: boolean;
  onAnswer: (item: Extract<ViewItem, { kind: "clarification" }>, answer: { optionId?: string; value: string }) => void;
  onRetry: () => void;
  /** Rerun the latest answer (its last AI message id). */
  onRegenerate?: (aiMessageId: string) => void;
  /** Replace the latest user message and rerun. */
  onEdit?: (humanMessageId: string, text: string) => void;
  /** Continue in a new thread from this answer. */
  onBranch?: (aiMessageId: string) => void;
}) {
  const { items, streaming, onAnswer, onRetry, onRegenerate, onEdit, onBranch } = props;
  const [editing, setEditing] = useState<{ id: string; text: string } | undefined>();
  const lastHuman = items.reduce((acc, it, idx) => (it.kind === "human" ? idx : acc), -1);
  const lastAssistant = items.reduce((acc, it, idx) => (it.kind === "assistant" ? idx : acc), -1);
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" });
  }, [items]);
  return (
    <div className="messages" role="log" aria-live="polite" aria-label="Conversation">
      {items.map((item, i) => {
        if (item.kind === "human") {
          return (
            <div key={item.id} className="msg human" data-testid="human-message">
              {item.files.length > 0 && (
                <div className="chips">
                  {item.files.map((f) => (
                    <span className="chip" key={f.filename}><Icon name="clip" size={12} /> {f.filename}</span>
                  ))}
                </div>
              )}
              {editing?.id === item.id ? (
                <form
                  className="edit-form"
                  onSubmit={(e) => {
                    e.preventDefault();
                    onEdit?.(item.id, editing.text);
                    setEditing(undefined);
                  }}
                >
                  <textarea aria-label="Edit message" value={editing.text} onChange={(e) => setEditing({ id: item.id, text: e.target.value })} />
                  <div className="msg-actions">
                    <button type="submit">Send edit</button>
                    <button type="button" onClick={() => setEditing(undefined)}>
                      Cancel
                    </button>
                  </div>
                </form>
              ) : (
                <div className="bubble">{item.text}</div>
              )}
              {item.remembered && <RememberedNote facts={item.remembered.map((content) => ({ content }))} />}
              {onEdit && !streaming && i === lastHuman && lastAssistant > i && !item.id.startsWith("local-") && editing?.id !== item.id && (
                <div className="msg-actions">
                  <button type="button" className="msg-action" aria-label="Edit message" onClick={() => setEditing({ id: item.id, text: item.text })}>
                    Edit
                  </button>
                </div>
              )}
            </div>
          );
        }
        if (item.kind === "clarification") {
          return <ClarificationCard key={item.id} request={item.request} answered={item.answered} disabled={streaming} onAnswer={(a) => onAnswer(item, a)} />;
        }
        const last = i === items.length - 1;
        // A turn that ended in the model-error answer offers one Retry, on that answer: it reruns the turn (as
        // Regenerate does, so a reload does not lose it), and the turn's own Retry action is not shown beside it.
        const fallbackAt = item.parts.reduce((acc, p, idx) => (p.kind === "text" && p.errorFallback ? idx : acc), -1);
        const failed = fallbackAt >= 0 && fallbackAt === item.parts.length - 1;
        const retryHere = !streaming && failed && i === lastAssistant;
        const retryTurn = () => (onRegenerate && item.lastAiId ? onRegenerate(item.lastAiId) : onRetry());
        return (
          <div key={item.id} className="msg assistant" data-testid="assistant-message">
            {item.parts.map((p, partIndex) => {
              if (p.kind === "reasoning") {
                return (
                  <details key={p.id} className="reasoning" open={streaming && last}>
                    <summary>Thinking</summary>
                    <Markdown text={p.text} />
                  </details>
                );
              }
              if (p.kind === "tool") return p.step.subtask ? <SubagentCard key={p.id} step={p.step} /> : <ToolStepView key={p.id} step={p.step} />;
              return (
                <div key={p.id} className={p.errorFallback ? "answer error-fallback" : "answer"} role={p.errorFallback ? "alert" : undefined}>
                  <Markdown text={p.text} />
                  {retryHere && partIndex === fallbackAt && (
                    <button type="button" className="retry" onClick={retryTurn}>
                      Retry
                    </button>
                  )}
                </div>
              );
            })}
            {!(streaming && last) && <Sources sources={collectSources(item.parts)} />}
            {streaming && last && <span className="typing" aria-label="Assistant is responding">●●●</span>}
            {item.stopped && !(streaming && last) && (
              <div className="stopped-marker" data-testid="stopped-marker" role="note">
                Stopped
              </div>
            )}
            {!streaming && item.lastAiId && (onRegenerate || onBranch) && (
              <div className="msg-actions">
                {onRegenerate && i === lastAssistant && !failed && (
                  <button type="button" className="msg-action" aria-label="Regenerate answer" onClick={() => onRegenerate(item.lastAiId!)}>
                    Retry
                  </button>
                )}
                {onBranch && (
                  <button type="button" className="msg-action" aria-label="Branch from here" onClick={() => onBranch(item.lastAiId!)}>
                    Branch
                  </button>
                )}
              </div>
            )}
          </div>
        );
      })}
      <div ref={end} />
    </div>
  );
}
