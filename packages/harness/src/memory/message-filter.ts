/**
 * Turning a conversation into updater input: keep the user's turns and the
 * final answers, drop framework-injected hidden messages, strip upload blocks
 * (uploads are per-thread and would make later threads look for files that
 * are gone), drop pure acknowledgements, and detect the signals that make an
 * update important (a correction, a stated preference…).
 */
import { contentText } from "../messages";
import type { AIMessage, HumanMessage, Message } from "../messages";
import { ORIGINAL_USER_CONTENT_KEY } from "../middlewares/input-sanitization";
import { VIRTUAL_UPLOADS } from "../sandbox/thread-paths";
import type { FeedEvidence, TurnEvidence } from "./provenance";

/** A conversation turn as the updater sees it. */
export interface MemoryTurn {
  role: "human" | "ai";
  /** Message id (watermark identity), when the message has one. */
  id?: string;
  text: string;
  /**
   * AI turns: the tool results the answer was written after (since the previous
   * kept turn). Not shown to the updater; the pipeline uses them to decide
   * which proposed facts rest on tool output or uploads (see `provenance.ts`).
   */
  evidence?: TurnEvidence[];
}

/** At most this much of one tool result is kept as evidence (enough to tell what a fact was taken from). */
export const MAX_EVIDENCE_CHARS = 8000;

/** Signal classes (they double as fact categories, except `reinforcement`). */
export const SIGNAL_NAMES = ["correction", "reinforcement", "preference", "identity", "goal", "decision"] as const;
/** One signal class. */
export type MemorySignal = (typeof SIGNAL_NAMES)[number];

const UPLOAD_BLOCK = /<(uploaded_files|current_uploads)>[\s\S]*?<\/\1>\n*/gi;

const SIGNAL_PATTERNS: Record<MemorySignal, RegExp[]> = {
  correction: [/\bthat(?:'s| is) (?:wrong|incorrect|not right)\b/i, /\byou (?:misunderstood|got it wrong)\b/i, /\btry again\b/i, /\bredo\b/i, /\bactually,? (?:it|i|my)\b/i, /不对/, /你理解错了/, /你理解有误/, /重试/, /重新来/, /换一种/, /改用/],
  reinforcement: [/\byes[,.]?\s+(?:exactly|perfect|that(?:'s| is) (?:right|it))\b/i, /\bperfect(?:[.!?]|$)/i, /\bexactly (?:right|correct)\b/i, /\bthat(?:'s| is) (?:exactly )?(?:right|correct|what i (?:wanted|needed|meant))\b/i, /\bkeep (?:doing )?that\b/i, /完全正确/, /正是我想要的/, /继续保持/],
  preference: [/\bI (?:really )?(?:prefer|like|love|enjoy|favou?r)\b/i, /\bI (?:really )?(?:hate|dislike|don't like|do not like|can't stand|cannot stand)\b/i, /\bmy favou?rite\b/i, /\bI'd rather\b/i, /我(?:更)?喜欢/, /我偏好/, /我讨厌/, /我不喜欢/],
  identity: [/\bI am (?:a |an )?[a-z][a-z -]{2,}\b/i, /\bI'm (?:a |an )?[a-z][a-z -]{2,}\b/i, /\bI work (?:as|at|for)\b/i, /\bmy (?:job|role|name) is\b/i, /我是/, /我的(?:职业|工作)是/, /我担任/],
  goal: [/\bI (?:plan to|want to|am going to|aim to|intend to)\b/i, /\bmy goal is\b/i, /\bI'm going to\b/i, /我的目标是/, /我打算/, /我准备/],
  decision: [/\blet's (?:go with|use|pick|choose)\b/i, /\bI'll (?:go with|use|pick|choose)\b/i, /\bwe (?:should|will) (?:go with|use|pick|choose)\b/i, /\bI (?:decided|chose|selected) to\b/i, /就用/, /决定(?:用|采用)/, /我选/],
};

/** Whole-message acknowledgements (matched after trailing punctuation is removed). */
const TRIVIAL = [/^嗯+$/, /^ok(?:ay)?$/i, /^好(?:的[呢]?|呀)?$/, /^(?:谢谢|感谢|多谢|对|是的|收到|明白|了解|知道了)$/, /^got it$/i, /^thanks?(?: you)?$/i, /^thank you$/i, /^cheers$/i, /^(?:cool|nice|great|sure|yes|yep|no problem)$/i];
const TRIVIAL_TRAIL = /[\s.。,，!！?？;；]+$/;

/** True for a well-formed answer to a clarification question (user-authored even though hidden). */
function isClarificationAnswer(kwargs: Record<string, unknown> | undefined): boolean {
  const r = kwargs?.human_input_response as Record<string, unknown> | undefined;
  if (!r || typeof r !== "object" || r.version !== 1 || r.kind !== "human_input_response") return false;
  const ok = (v: unknown) => typeof v === "string" && v.trim() !== "";
  if (!ok(r.source) || !ok(r.request_id) || !ok(r.value)) return false;
  return r.response_kind === "text" || (r.response_kind === "option" && ok(r.option_id));
}

/** A human message's own words: the server-recorded original, else its text with upload blocks removed. */
export function humanTurnText(m: HumanMessage): string {
  const original = m.additional_kwargs?.[ORIGINAL_USER_CONTENT_KEY];
  const text = typeof original === "string" ? original : contentText(m.content);
  return stripUploadBlocks(text);
}

/** Remove `<uploaded_files>` / `<current_uploads>` blocks. */
export function stripUploadBlocks(text: string): string {
  return text.replace(UPLOAD_BLOCK, "").trim();
}

/**
 * Keep human turns and AI messages without tool calls. Hidden human messages
 * (memory, reminders, images) are dropped unless they answer a clarification.
 * A human turn that was nothing but an upload block is dropped together with
 * the AI reply that follows it. Tool results are not turns; each is kept as
 * evidence on the next AI answer (`upload` when its call named a path under
 * the uploads directory, else `tool`).
 */
export function filterMessagesForMemory(messages: readonly Message[]): MemoryTurn[] {
  const out: MemoryTurn[] = [];
  const calls = new Map<string, { name: string; upload: boolean }>();
  let pending: TurnEvidence[] = [];
  let skipNextAi = false;
  for (const m of messages) {
    if (m.type === "human") {
      if (m.additional_kwargs?.hide_from_ui && !isClarificationAnswer(m.additional_kwargs)) continue;
      const text = humanTurnText(m);
      if (!text) {
        skipNextAi = true;
        continue;
      }
      out.push({ role: "human", id: m.id, text });
      skipNextAi = false;
    } else if (m.type === "tool") {
      const call = calls.get(m.tool_call_id);
      const text = contentText(m.content);
      if (text.trim()) pending.push({ kind: call?.upload ? "upload" : "tool", tool: call?.name ?? m.name ?? "tool", text: text.slice(0, MAX_EVIDENCE_CHARS) });
    } else if (m.type === "ai") {
      const ai = m as AIMessage;
      if (ai.tool_calls?.length) {
        for (const c of ai.tool_calls) if (c.id) calls.set(c.id, { name: c.name, upload: JSON.stringify(c.args ?? {}).includes(VIRTUAL_UPLOADS) });
        continue;
      }
      if (skipNextAi) {
        skipNextAi = false;
        pending = [];
        continue;
      }
      const text = contentText(ai.content).trim();
      if (!text) continue;
      out.push(pending.length ? { role: "ai", id: ai.id, text, evidence: pending } : { role: "ai", id: ai.id, text });
      pending = [];
    }
  }
  // A run that ended on tool results (no answer after them) still carried them.
  const last = out[out.length - 1];
  if (pending.length && last) out[out.length - 1] = { ...last, evidence: [...(last.evidence ?? []), ...pending] };
  return out;
}

/** True when the whole human turn is an acknowledgement ("ok", "thanks", "好的"). */
export function isTrivialTurn(text: string): boolean {
  const t = text.trim().replace(TRIVIAL_TRAIL, "");
  return t !== "" && TRIVIAL.some((re) => re.test(t));
}

/** Drop trivial human turns and the AI replies to them. Empty when every turn was trivial. */
export function filterTrivial(turns: readonly MemoryTurn[]): MemoryTurn[] {
  const out: MemoryTurn[] = [];
  let skipNextAi = false;
  for (const t of turns) {
    if (t.role === "human") {
      if (isTrivialTurn(t.text)) {
        skipNextAi = true;
        continue;
      }
      skipNextAi = false;
      out.push(t);
    } else if (skipNextAi) {
      skipNextAi = false;
    } else {
      out.push(t);
    }
  }
  return out;
}

/** Signals found in the human turns among the last six turns. */
export function detectSignals(turns: readonly MemoryTurn[]): Set<MemorySignal> {
  const hits = new Set<MemorySignal>();
  const recent = turns.slice(-6).filter((t) => t.role === "human");
  for (const name of SIGNAL_NAMES) {
    if (recent.some((t) => SIGNAL_PATTERNS[name].some((re) => re.test(t.text)))) hits.add(name);
  }
  return hits;
}

/** The conversation block of the updater prompt; long turns keep their head and tail. */
export function formatConversation(turns: readonly MemoryTurn[]): string {
  return turns
    .map((t) => {
      const text = t.text.length > 1000 ? `${t.text.slice(0, 500)}\n...[truncated]...\n${t.text.slice(-500)}` : t.text;
      // The updater labels each fact's source; it must know which answers relayed tool output or uploads.
      const used = t.evidence?.length ? ` (written after reading ${[...new Set(t.evidence.map((e) => (e.kind === "upload" ? "uploaded files" : `tool results of ${e.tool}`)))].join(", ")})` : "";
      return `${t.role === "human" ? "User" : `Assistant${used}`}: ${text}`;
    })
    .join("\n\n");
}

/** The user's words and the untrusted contents of a feed, for provenance decisions. */
export function feedEvidence(turns: readonly MemoryTurn[]): FeedEvidence {
  const ev: FeedEvidence = { userText: "", tool: [], upload: [] };
  const user: string[] = [];
  for (const t of turns) {
    if (t.role === "human") user.push(t.text);
    for (const e of t.evidence ?? []) ev[e.kind].push(e.text);
  }
  ev.userText = user.join("\n");
  return ev;
}
