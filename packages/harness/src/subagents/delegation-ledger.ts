import type { AIMessage, Message, ToolMessage } from "../messages";
import type { DelegationEntry } from "../state";
import { TERMINAL_DELEGATION_STATUSES } from "../state";
import { escapeXmlText } from "../text";
import { boundResultText, readSubagentResultMetadata, sha256Hex } from "./status-contract";

/** Ledger limits. */
export const DELEGATION_DESCRIPTION_CAP = 200;
export const LEDGER_RENDER_CHAR_BUDGET = 6000;
const ENTRY_RESULT_RENDER_CAP = 120;

const STATUS_ONLY_BRIEFS: Record<string, string> = {
  failed: "Task failed.",
  cancelled: "Task cancelled by user.",
  timed_out: "Task timed out.",
  polling_timed_out: "Task polling timed out.",
};

/** The guidance the lead model reads next to each ledger entry (DeerFlow's wording; the model's behaviour depends on it). */
export function delegationGuidance(status: string, stopReason?: string | null): string {
  if (stopReason) {
    return status === "completed"
      ? "hit a guardrail cap with a partial result; reuse the partial result, retry with a tighter scope, or raise the per-agent budget (max_turns / token_budget)"
      : "hit a guardrail cap with no usable result; retry with a tighter scope or raise the per-agent budget (max_turns / token_budget)";
  }
  switch (status) {
    case "in_progress":
      return "already delegated; do NOT delegate again; wait for or build on the result";
    case "completed":
      return "completed result; do NOT delegate again; reuse this result";
    case "failed":
      return "failed attempt; may retry with a changed plan";
    case "cancelled":
      return "cancelled attempt; may retry with a changed plan";
    case "timed_out":
      return "timed-out attempt; may retry with a changed plan";
    case "polling_timed_out":
      return "polling timed-out attempt; may retry with a changed plan";
    default:
      return "prior attempt; inspect status before retrying";
  }
}

/**
 * Ledger entries of the `task` calls in `messages`: each call starts
 * `in_progress`; its terminal ToolMessage's status metadata upgrades it
 * (status, brief, digest, the message id as `result_ref`, stop reason).
 */
export function extractDelegations(messages: readonly Message[], now: string = new Date().toISOString()): DelegationEntry[] {
  const byId = new Map<string, DelegationEntry>();
  for (const m of messages) {
    if (m.type !== "ai") continue;
    for (const call of (m as AIMessage).tool_calls ?? []) {
      if (call.name !== "task" || !call.id) continue;
      const args = (call.args ?? {}) as Record<string, unknown>;
      byId.set(call.id, {
        id: call.id,
        description: String(args.description || args.prompt || "").slice(0, DELEGATION_DESCRIPTION_CAP),
        subagent_type: String(args.subagent_type ?? ""),
        status: "in_progress",
        created_at: now,
      });
    }
  }
  for (const m of messages) {
    if (m.type !== "tool") continue;
    const entry = byId.get((m as ToolMessage).tool_call_id);
    if (!entry) continue;
    const s = readSubagentResultMetadata(m.additional_kwargs);
    if (!s) continue;
    entry.status = s.status;
    if (s.stopReason) entry.stop_reason = s.stopReason;
    const text = s.resultBrief ?? s.error ?? STATUS_ONLY_BRIEFS[s.status];
    if (text) {
      entry.result_brief = boundResultText(text);
      entry.result_sha256 = s.resultSha256 ?? sha256Hex(text);
      entry.result_ref = m.id ?? entry.id;
    }
  }
  return [...byId.values()];
}

/** Whitespace collapsed to single spaces, then HTML-escaped: entries are data inside the data block. */
function esc(value: unknown): string {
  return escapeXmlText(String(value ?? "").split(/\s+/).filter(Boolean).join(" "));
}

function entryLine(e: DelegationEntry): string {
  let line = `- [${esc(e.status)}] ${esc(e.description)} (via ${esc(e.subagent_type)}; ${delegationGuidance(e.status, e.stop_reason)})`;
  if (e.result_brief) line += ` -> ${esc(boundResultText(e.result_brief, ENTRY_RESULT_RENDER_CAP))}`;
  return line;
}

/**
 * The ledger as model-visible data, newest first, within `maxChars`; the
 * oldest entries that do not fit are replaced by one "omitted" line.
 */
export function renderDelegationLedger(entries: readonly DelegationEntry[], maxChars: number = LEDGER_RENDER_CHAR_BUDGET): string {
  if (!entries.length) return "";
  const lines = [
    "## Work already delegated",
    "Newest entries are shown first. In-progress entries are already delegated. Completed entries are reusable results. Failed, cancelled, or timed-out entries are prior attempts.",
  ];
  const fits = (candidate: string) => [...lines, candidate].join("\n").length <= maxChars;
  let omitted = 0;
  const newestFirst = [...entries].reverse();
  for (let i = 0; i < newestFirst.length; i++) {
    const line = entryLine(newestFirst[i]);
    if (fits(line)) {
      lines.push(line);
      continue;
    }
    omitted = newestFirst.length - i;
    break;
  }
  if (omitted) {
    const omittedLine = () => `- ... ${omitted} older delegation entries omitted from this model view because of context budget`;
    while (lines.length > 2 && !fits(omittedLine())) {
      lines.pop();
      omitted++;
    }
    if (fits(omittedLine())) lines.push(omittedLine());
  }
  const out = lines.join("\n");
  return out.length <= maxChars ? out : `${out.slice(0, Math.max(0, maxChars - 4))}\n...`;
}

/** Distinct ledger ids of one run (all entries when `runId` is undefined). */
export function countRunDelegations(entries: readonly DelegationEntry[] | null | undefined, runId: string | undefined): number {
  const ids = new Set<string>();
  for (const e of entries ?? []) {
    if (runId !== undefined && e.run_id !== runId) continue;
    if (e.id) ids.add(e.id);
  }
  return ids.size;
}

const STABLE_FIELDS: (keyof DelegationEntry)[] = ["description", "subagent_type", "status", "run_id", "result_brief", "result_sha256", "result_ref", "stop_reason"];

/**
 * The entries of `fresh` that are new or changed against `existing`, with
 * new ids tagged with `runId` (an id already in the ledger keeps its run). A
 * terminal entry is never reported as going back to in-progress.
 */
export function changedDelegations(fresh: readonly DelegationEntry[], existing: readonly DelegationEntry[], runId: string | undefined): DelegationEntry[] {
  const prev = new Map(existing.map((e) => [e.id, e]));
  const out: DelegationEntry[] = [];
  for (const e of fresh) {
    const p = prev.get(e.id);
    const tagged: DelegationEntry = { ...e, run_id: p ? (p.run_id ?? null) : (runId ?? null) };
    if (!p) {
      out.push(tagged);
      continue;
    }
    if (TERMINAL_DELEGATION_STATUSES.has(p.status) && !TERMINAL_DELEGATION_STATUSES.has(e.status)) continue;
    if (STABLE_FIELDS.some((f) => (p[f] ?? null) !== (tagged[f] ?? null))) out.push(tagged);
  }
  return out;
}
