import { Icon } from "./Icon";
import type { ToolStep } from "../stream/groups";

function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function summary(step: ToolStep): string {
  const a = step.args;
  const pick = a.description ?? a.command ?? a.path ?? a.query ?? a.url ?? (Array.isArray(a.filepaths) ? (a.filepaths as string[]).join(", ") : undefined);
  return typeof pick === "string" ? pick : "";
}

// `incomplete`: the run ended (Stop, a failure, a restart) before the tool answered; the run stores no result for it.
const STATUS_LABEL: Record<ToolStep["status"], string> = { running: "running", success: "done", error: "failed", incomplete: "stopped" };
const STOPPED_NOTE = "The run was stopped before this tool returned a result.";

/** One tool call as an expandable step: name, short summary, status, duration; arguments and result inside. */
export function ToolStepView({ step }: { step: ToolStep }) {
  return (
    <details className={`tool-step status-${step.status}`} data-testid="tool-step" data-tool={step.name}>
      <summary>
        <span className="tool-icon" aria-hidden="true"><Icon name={step.status === "running" ? "spinner" : step.status === "error" ? "alert" : "tool"} className={step.status === "running" ? "spin" : ""} /></span>
        <span className="tool-name">{step.name}</span>
        <span className="tool-summary">{summary(step)}</span>
        <span className="tool-status" role="status" title={step.status === "incomplete" ? STOPPED_NOTE : undefined}>{STATUS_LABEL[step.status]}</span>
        {step.durationMs !== undefined && <span className="tool-duration">{formatDuration(step.durationMs)}</span>}
      </summary>
      <div className="tool-body">
        <div className="tool-label">Arguments</div>
        <pre className="tool-args">{JSON.stringify(step.args, null, 2)}</pre>
        {step.status === "incomplete" && <div className="tool-stopped muted">{STOPPED_NOTE}</div>}
        {step.result !== undefined && (
          <>
            <div className="tool-label">Result</div>
            <pre className="tool-result">{step.result}</pre>
          </>
        )}
      </div>
    </details>
  );
}
