import type { ContentBlock, ThreadView, ToolCall, WireMessage } from "./types";
import { subtaskFor } from "./subtasks";
import type { Subtask } from "./subtasks";

/** Message names DeerFlow never shows. */
export const HIDDEN_NAMES = new Set(["summary", "loop_warning", "todo_reminder", "todo_completion_reminder"]);

/** True when the message must not be rendered (`hide_from_ui`, hidden names, system messages). */
export function isHidden(m: WireMessage): boolean {
  if (m.type === "system") return true;
  if (m.additional_kwargs?.hide_from_ui === true) return true;
  if (m.name && HIDDEN_NAMES.has(m.name)) return true;
  return false;
}

/** Plain text of a message's content (text blocks joined). */
export function textOf(content: WireMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b: ContentBlock) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("");
}

/** Splits an AI message's visible answer from its reasoning (reasoning_content, thinking blocks, `<think>`). */
export function splitReasoning(m: WireMessage): { reasoning: string; text: string } {
  let reasoning = "";
  const rc = m.additional_kwargs?.reasoning_content;
  if (typeof rc === "string") reasoning += rc;
  if (Array.isArray(m.content)) {
    for (const b of m.content) if (b.type === "thinking" || b.type === "reasoning") reasoning += String(b.thinking ?? b.text ?? b.reasoning ?? "");
  }
  let text = textOf(m.content);
  const think = /^\s*<think>([\s\S]*?)(<\/think>|$)/.exec(text);
  if (think) {
    reasoning += think[1];
    text = text.slice(think[0].length);
  }
  return { reasoning: reasoning.trim() ? reasoning : "", text };
}

/** A tool step: the call paired with its result (by tool_call_id). */
export interface ToolStep {
  callId: string;
  name: string;
  args: Record<string, unknown>;
  result?: string;
  status: "running" | "success" | "error" | "incomplete";
  durationMs?: number;
  /** For a `task` call: the sub-agent card (live events merged with the result's status metadata). */
  subtask?: Subtask;
}

/** A user-side file attached to a human message. */
export interface FileRef {
  filename: string;
  size?: number;
  path?: string;
}

/** Option of a clarification request. */
export interface ClarificationOption {
  id: string;
  label: string;
  value: string;
}

/** The human-input request carried on an `ask_clarification` tool message. */
export interface ClarificationRequest {
  requestId: string;
  source: string;
  question: string;
  context?: string;
  inputMode: string;
  options: ClarificationOption[];
}

/** A part of an assistant turn, in order. */
export type AssistantPart =
  | { kind: "reasoning"; id: string; text: string }
  | { kind: "text"; id: string; text: string; errorFallback: boolean }
  | { kind: "tool"; id: string; step: ToolStep };

/** One visible block of the conversation. */
export type ViewItem =
  | { kind: "human"; id: string; text: string; files: FileRef[]; remembered?: string[] }
  | { kind: "assistant"; id: string; parts: AssistantPart[]; lastAiId?: string; stopped?: boolean }
  | { kind: "clarification"; id: string; request: ClarificationRequest; answered: boolean };

function resultText(m: WireMessage): string {
  return typeof m.content === "string" ? m.content : textOf(m.content) || JSON.stringify(m.content);
}

function clarificationOf(m: WireMessage): ClarificationRequest | undefined {
  const art = m.artifact as { human_input?: Record<string, unknown> } | undefined;
  const hi = art?.human_input;
  if (m.name !== "ask_clarification") return undefined;
  if (!hi) {
    return { requestId: m.id ?? m.tool_call_id ?? "", source: "ask_clarification", question: resultText(m), inputMode: "free_text", options: [] };
  }
  const options = Array.isArray(hi.options)
    ? (hi.options as unknown[]).map((o, i) =>
        typeof o === "string"
          ? { id: `option-${i + 1}`, label: o, value: o }
          : {
              id: String((o as ClarificationOption).id ?? `option-${i + 1}`),
              label: String((o as ClarificationOption).label ?? (o as ClarificationOption).value),
              value: String((o as ClarificationOption).value ?? (o as ClarificationOption).label),
            },
      )
    : [];
  return {
    requestId: String(hi.request_id ?? m.id ?? ""),
    source: String(hi.source ?? "ask_clarification"),
    question: String(hi.question ?? resultText(m)),
    context: typeof hi.context === "string" ? hi.context : undefined,
    inputMode: String(hi.input_mode ?? (options.length ? "choice_with_other" : "free_text")),
    options,
  };
}

/** Suffix of the hidden message that carries a turn's `<memory>` block (its id is `<user message id>__memory`). */
const MEMORY_MESSAGE_SUFFIX = "__memory";

/**
 * The facts long-term memory injected for each user message, by that
 * message's id: read from the hidden memory message's `memory_recall` report,
 * so the conversation can say what was remembered.
 */
function rememberedFacts(messages: readonly WireMessage[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of messages) {
    if (!m.id?.endsWith(MEMORY_MESSAGE_SUFFIX)) continue;
    const recall = m.additional_kwargs?.memory_recall as { facts?: Array<{ content?: unknown }> } | undefined;
    const facts = (recall?.facts ?? []).map((f) => f.content).filter((c): c is string => typeof c === "string" && !!c);
    if (facts.length) out.set(m.id.slice(0, -MEMORY_MESSAGE_SUFFIX.length), facts);
  }
  return out;
}

/**
 * Groups the thread's messages into view items: human turns, assistant turns (reasoning, text and tool
 * steps paired with their results by tool_call_id) and clarification cards. Hidden messages are dropped,
 * but a hidden clarification answer still marks the preceding card as answered.
 */
export function groupMessages(view: Pick<ThreadView, "messages" | "timings"> & Partial<Pick<ThreadView, "subtasks" | "phase" | "stoppedTurns">>, streaming = false): ViewItem[] {
  const items: ViewItem[] = [];
  const results = new Map<string, WireMessage>();
  for (const m of view.messages) if (m.type === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  let current: Extract<ViewItem, { kind: "assistant" }> | undefined;
  const openCards: Extract<ViewItem, { kind: "clarification" }>[] = [];
  const remembered = rememberedFacts(view.messages);

  for (const m of view.messages) {
    if (m.type === "human") {
      for (const c of openCards) c.answered = true;
      openCards.length = 0;
    }
    if (isHidden(m)) continue;
    if (m.type === "human") {
      current = undefined;
      const files = Array.isArray(m.additional_kwargs?.files) ? (m.additional_kwargs.files as FileRef[]) : [];
      const recalled = m.id ? remembered.get(m.id) : undefined;
      items.push({ kind: "human", id: m.id ?? `h${items.length}`, text: textOf(m.content), files, ...(recalled?.length ? { remembered: recalled } : {}) });
      continue;
    }
    if (m.type === "tool") {
      const req = clarificationOf(m);
      if (req) {
        current = undefined;
        const card = { kind: "clarification" as const, id: m.id ?? req.requestId, request: req, answered: false };
        items.push(card);
        openCards.push(card);
        continue;
      }
      // Paired results are rendered inside their step; an orphan result gets its own step.
      const paired = view.messages.some((x) => x.type === "ai" && (x.tool_calls ?? []).some((tc) => tc.id === m.tool_call_id));
      if (paired) continue;
      if (!current) {
        current = { kind: "assistant", id: `t-${m.id}`, parts: [] };
        items.push(current);
      }
      current.parts.push({
        kind: "tool",
        id: m.id ?? String(current.parts.length),
        step: { callId: m.tool_call_id ?? "", name: m.name ?? "tool", args: {}, result: resultText(m), status: m.status === "error" ? "error" : "success" },
      });
      continue;
    }
    if (m.type !== "ai") continue;
    if (!current) {
      current = { kind: "assistant", id: m.id ?? `a${items.length}`, parts: [] };
      items.push(current);
    }
    if (m.id) current.lastAiId = m.id;
    const { reasoning, text } = splitReasoning(m);
    if (reasoning) current.parts.push({ kind: "reasoning", id: `${m.id}-r`, text: reasoning });
    if (text) current.parts.push({ kind: "text", id: `${m.id}-t`, text, errorFallback: m.additional_kwargs?.deerflow_error_fallback === true });
    for (const tc of (m.tool_calls ?? []) as ToolCall[]) {
      if (tc.name === "ask_clarification") continue;
      const callId = tc.id ?? "";
      const res = callId ? results.get(callId) : undefined;
      const timing = callId ? view.timings[callId] : undefined;
      const failed = res && (res.status === "error" || /^Error[:\s]/.test(resultText(res)));
      current.parts.push({
        kind: "tool",
        id: callId || `${m.id}-${tc.name}`,
        step: {
          callId,
          name: tc.name,
          args: tc.args ?? {},
          result: res ? resultText(res) : undefined,
          status: res ? (failed ? "error" : "success") : streaming ? "running" : "incomplete",
          durationMs: timing?.end !== undefined ? timing.end - timing.start : undefined,
          ...(tc.name === "task" ? { subtask: subtaskFor(tc, res, view.subtasks?.[callId], streaming) } : {}),
        },
      });
    }
  }
  markStopped(items, view.phase === "cancelled");
  return markStoppedRuns(items, new Set(view.stoppedTurns ?? []));
}

/**
 * Marks the turns the user stopped: the last one while the view says the run was just cancelled, and any turn
 * with a sub-agent that ended "cancelled" (what a stopped run leaves in the thread, so a reload says it too).
 */
/**
 * Marks the answer to each human message whose run was stopped (its run record says `interrupted`). An answer
 * cut off mid-stream never reached the thread's state, so the turn may have no assistant block: one with only
 * the marker stands in for it, as the partial answer ended with the marker right after Stop.
 */
function markStoppedRuns(items: ViewItem[], stopped: ReadonlySet<string>): ViewItem[] {
  if (!stopped.size) return items;
  const out: ViewItem[] = [];
  items.forEach((it, i) => {
    out.push(it);
    if (it.kind !== "human" || !stopped.has(it.id)) return;
    const next = items[i + 1];
    if (next?.kind === "assistant") next.stopped = true;
    else if (next?.kind !== "clarification") out.push({ kind: "assistant", id: `stopped-${it.id}`, parts: [], stopped: true });
  });
  return out;
}

function markStopped(items: ViewItem[], justCancelled: boolean): void {
  let last: Extract<ViewItem, { kind: "assistant" }> | undefined;
  for (const it of items) {
    if (it.kind !== "assistant") continue;
    last = it;
    if (it.parts.some((p) => p.kind === "tool" && p.step.subtask?.status === "cancelled")) it.stopped = true;
  }
  if (justCancelled && last && items[items.length - 1] === last) last.stopped = true;
}
