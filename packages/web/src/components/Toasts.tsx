import { Icon } from "./Icon";
import { useEffect } from "react";
import type { Notice } from "../stream/types";

/** Toast notices (llm_retry, errors); retry notices fade after a few seconds. */
export function Toasts({ notices, onDismiss }: { notices: Notice[]; onDismiss: (id: number) => void }) {
  useEffect(() => {
    const timers = notices.filter((n) => n.kind !== "error").map((n) => setTimeout(() => onDismiss(n.id), 6000));
    return () => timers.forEach(clearTimeout);
  }, [notices, onDismiss]);
  return (
    <div className="toasts" aria-live="assertive">
      {notices.map((n) => (
        <div key={n.id} className={`toast ${n.kind}`} role={n.kind === "error" ? "alert" : "status"} data-testid="toast">
          <span>{n.text}</span>
          <button type="button" className="icon" aria-label="Dismiss notification" onClick={() => onDismiss(n.id)}>
            <Icon name="close" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}
