import { Icon } from "./Icon";
import { Markdown } from "./Markdown";
import type { ToolStep } from "../stream/groups";
import type { Subtask } from "../stream/subtasks";

const STATUS_LABEL: Record<Subtask["status"], string> = {
  running: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timed_out: "timed out",
  polling_timed_out: "timed out",
};

function tokens(n: number): string {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/**
 * A sub-agent (`task` call) card: description, type, status, model, live
 * steps while it runs, then its result or error, and its token usage.
 */
export function SubagentCard({ step }: { step: ToolStep }) {
  const t = step.subtask as Subtask;
  const running = t.status === "running";
  // Once completed, the final answer step is shown as the result, not repeated as a step.
  const last = t.steps[t.steps.length - 1];
  const steps = t.status === "completed" && last && !last.tools.length && t.result !== undefined ? t.steps.slice(0, -1) : t.steps;
  return (
    <details className={`subagent-card status-${t.status}`} data-testid="subagent-card" data-task-id={t.taskId} data-status={t.status} open={running}>
      <summary>
        <span className="tool-icon" aria-hidden="true">
          <Icon name={running ? "spinner" : t.status === "completed" ? "tool" : "alert"} className={running ? "spin" : ""} />
        </span>
        <span className="subagent-title">{t.description || "Sub-agent task"}</span>
        {t.subagentType && <span className="subagent-type">{t.subagentType}</span>}
        <span className="tool-status" role="status" data-testid="subagent-status">
          {STATUS_LABEL[t.status]}
          {t.stopReason ? ` (${t.stopReason.replace("_", " ")})` : ""}
        </span>
        {t.usage && t.usage.total_tokens > 0 && (
          <span className="subagent-usage" data-testid="subagent-usage" title={`${t.usage.input_tokens} in / ${t.usage.output_tokens} out`}>
            {tokens(t.usage.total_tokens)} tokens
          </span>
        )}
      </summary>
      <div className="tool-body">
        {t.modelName && <div className="subagent-model">Model: {t.modelName}</div>}
        {steps.length > 0 && (
          <ol className="subagent-steps" data-testid="subagent-steps">
            {steps.map((s) => (
              <li key={s.index}>
                {s.text && <span className="subagent-step-text">{s.text.length > 200 ? `${s.text.slice(0, 200)}…` : s.text}</span>}
                {s.tools.map((name, i) => (
                  <span className="chip" key={`${name}-${i}`}>
                    <Icon name="tool" size={12} /> {name}
                  </span>
                ))}
              </li>
            ))}
          </ol>
        )}
        {t.result !== undefined && (
          <div className="subagent-result" data-testid="subagent-result">
            <Markdown text={t.result} />
          </div>
        )}
        {t.error && !running && (
          <div className="subagent-error" role="alert" data-testid="subagent-error">
            {t.error}
          </div>
        )}
      </div>
    </details>
  );
}
