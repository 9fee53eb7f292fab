import { useState } from "react";
import type { ClarificationRequest } from "../stream/groups";

/** The agent's clarification question with its options and a free-text answer. */
export function ClarificationCard(props: {
  request: ClarificationRequest;
  answered: boolean;
  disabled: boolean;
  onAnswer: (answer: { optionId?: string; value: string }) => void;
}) {
  const { request, answered, disabled, onAnswer } = props;
  const [text, setText] = useState("");
  const allowText = request.inputMode !== "single_choice";
  return (
    <section className={`clarification ${answered ? "answered" : ""}`} aria-label="Clarification question" data-testid="clarification">
      <div className="clarification-q">{request.question}</div>
      {request.context && <div className="clarification-ctx">{request.context}</div>}
      {answered ? (
        <div className="clarification-done">Answered</div>
      ) : (
        <>
          {request.options.length > 0 && (
            <div className="clarification-options" role="group" aria-label="Options">
              {request.options.map((o) => (
                <button key={o.id} type="button" disabled={disabled} onClick={() => onAnswer({ optionId: o.id, value: o.value })}>
                  {o.label}
                </button>
              ))}
            </div>
          )}
          {allowText && (
            <form
              className="clarification-text"
              onSubmit={(e) => {
                e.preventDefault();
                if (text.trim()) onAnswer({ value: text.trim() });
              }}
            >
              <input aria-label="Your answer" placeholder="Type your answer…" value={text} onChange={(e) => setText(e.target.value)} disabled={disabled} />
              <button type="submit" disabled={disabled || !text.trim()}>
                Answer
              </button>
            </form>
          )}
        </>
      )}
    </section>
  );
}
