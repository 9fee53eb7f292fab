import type { WireRun } from "@deerflow-ts/harness/wire";

/** One row of the gateway's persisted transcript (`GET /threads/{id}/messages/page`), the fields read here. */
export interface TranscriptRow {
  run_id: string;
  event_type: string;
  content: { id?: unknown };
}

/** The page `GET /threads/{id}/messages/page` answers. */
export interface TranscriptPage {
  data: TranscriptRow[];
  has_more: boolean;
  next_before_seq: number | null;
}

/**
 * Ids of the runs the user stopped. A cancelled run's record ends `interrupted`, but so does a run that paused
 * for a human answer (a tool's interrupt), so those are left out: the newest run while the thread still waits
 * on an interrupt (`pendingInterrupt`), and any run a later `command.resume` run answered.
 */
export function stoppedRunIds(runs: readonly WireRun[], pendingInterrupt = false): Set<string> {
  const ordered = [...runs].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const out = new Set<string>();
  ordered.forEach((r, i) => {
    if (r.status !== "interrupted") return;
    const next = ordered[i + 1];
    if (!next ? pendingInterrupt : isResume(next)) return;
    out.add(r.run_id);
  });
  return out;
}

function isResume(run: WireRun): boolean {
  const command = run.kwargs?.command as { resume?: unknown } | null | undefined;
  return !!command && command.resume !== undefined;
}

/**
 * The human messages that started a stopped run. The transcript stores each message with the run that wrote it,
 * and a run's human input is written under that run, so the human row of a stopped run names the turn to mark.
 */
export function stoppedTurnIds(stopped: ReadonlySet<string>, rows: readonly TranscriptRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    if (r.event_type !== "llm.human.input" || !stopped.has(r.run_id)) continue;
    if (typeof r.content.id === "string" && !out.includes(r.content.id)) out.push(r.content.id);
  }
  return out;
}
