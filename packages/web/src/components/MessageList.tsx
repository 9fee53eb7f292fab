import { Icon } from "./Icon";
import { useEffect, useRef } from "react";
import type { ViewItem } from "../stream/groups";
import { ClarificationCard } from "./ClarificationCard";
import { Markdown } from "./Markdown";
import { ToolStepView } from "./ToolStepView";

/** The conversation: human bubbles, assistant turns (reasoning, text, tool steps) and clarification cards. */
export function MessageList(props: {
  items: ViewItem[];
  streaming: boolean;
  onAnswer: (item: Extract<ViewItem, { kind: "clarification" }>, answer: { optionId?: string; value: string }) => void;
  onRetry: () => void;
}) {
  const { items, streaming, onAnswer, onRetry } = props;
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
              <div className="bubble">{item.text}</div>
            </div>
          );
        }
        if (item.kind === "clarification") {
          return <ClarificationCard key={item.id} request={item.request} answered={item.answered} disabled={streaming} onAnswer={(a) => onAnswer(item, a)} />;
        }
        const last = i === items.length - 1;
        return (
          <div key={item.id} className="msg assistant" data-testid="assistant-message">
            {item.parts.map((p) => {
              if (p.kind === "reasoning") {
                return (
                  <details key={p.id} className="reasoning" open={streaming && last}>
                    <summary>Thinking</summary>
                    <Markdown text={p.text} />
                  </details>
                );
              }
              if (p.kind === "tool") return <ToolStepView key={p.id} step={p.step} />;
              return (
                <div key={p.id} className={p.errorFallback ? "answer error-fallback" : "answer"} role={p.errorFallback ? "alert" : undefined}>
                  <Markdown text={p.text} />
                  {p.errorFallback && !streaming && (
                    <button type="button" className="retry" onClick={onRetry}>
                      Retry
                    </button>
                  )}
                </div>
              );
            })}
            {streaming && last && <span className="typing" aria-label="Assistant is responding">●●●</span>}
          </div>
        );
      })}
      <div ref={end} />
    </div>
  );
}
