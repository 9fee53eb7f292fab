import { z } from "zod";
import { contentText, humanMessage, removeAllMessages } from "../messages";
import type { Message } from "../messages";
import type { ChatModel } from "../models";
import { collectModelStream } from "../models";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState } from "../state";
import { isDynamicContextReminder } from "./dynamic-context";
import { approximateTokenCounter, bufferString, cutoffForMessages, cutoffForTokens } from "./summarization-cutoff";
import type { TokenCounter } from "./summarization-cutoff";
import { escapeXmlText } from "../text";
import { projectSummary } from "./summarization-projection";
import { parseMiddlewareOptions } from "./zod-options";

/** Default summary prompt (used when `summary_prompt` is null). `{messages}` is replaced by the history. */
export const DEFAULT_SUMMARY_PROMPT = `<role>
You condense conversation history for an AI agent whose context window is nearly full.
</role>

<task>
The history below will be deleted and replaced by what you write. Keep everything the agent needs to continue the work without repeating it:
- the user's goals, requirements, preferences and corrections;
- decisions made and why;
- what has been done already (tools called, files created or changed, with their paths) and the key results;
- open questions, pending steps and known problems.
Drop small talk, redundant detail and anything already superseded. Be factual and specific; do not invent anything.
Reply with the condensed context only, no preamble.
</task>

<messages>
Messages to summarize:
{messages}
</messages>`;

/** Canned summary when nothing is left to summarize. */
export const NO_HISTORY_SUMMARY = "No previous conversation history.";
/** Canned summary when trimming leaves nothing. */
export const TOO_LONG_SUMMARY = "Previous conversation was too long to summarize.";

const sizeSchema = z.object({ type: z.enum(["tokens", "messages", "fraction"]), value: z.number().positive() });

/** `summarization:` config section. */
export const summarizationOptionsSchema = z
  .object({
    enabled: z.boolean().default(false),
    model_name: z.string().nullish(),
    trigger: z.union([sizeSchema, z.array(sizeSchema)]).nullish(),
    keep: z
      .object({ type: z.enum(["tokens", "messages", "fraction"]), value: z.number().min(0) })
      .default({ type: "messages", value: 20 }),
    trim_tokens_to_summarize: z.number().int().min(1).nullable().default(4000),
    summary_prompt: z.string().nullish(),
    skill_file_read_tool_names: z.array(z.string()).nullish(),
    /** Project `summary_text` into each request (off when a DurableContext middleware does it). */
    project_summary: z.boolean().default(true),
  })
  .superRefine((o, ctx) => {
    for (const [i, t] of (Array.isArray(o.trigger) ? o.trigger : o.trigger ? [o.trigger] : []).entries()) {
      if (t.type === "fraction" && t.value > 1) ctx.addIssue({ code: "custom", path: ["trigger", i, "value"], message: "fraction must be <= 1" });
      if (t.type === "messages" && !Number.isInteger(t.value)) ctx.addIssue({ code: "custom", path: ["trigger", i, "value"], message: "messages must be an integer" });
    }
    if (o.keep.type === "fraction" && o.keep.value > 1) ctx.addIssue({ code: "custom", path: ["keep", "value"], message: "fraction must be <= 1" });
  });

/** What a summarization hook sees (e.g. the memory flush). */
export interface SummarizationEvent {
  threadId: string;
  messagesToSummarize: Message[];
  preservedMessages: Message[];
  summaryText: string;
}

/** Options of {@link createSummarizationMiddleware}. */
export type SummarizationOptions = z.input<typeof summarizationOptionsSchema> & {
  /** The summary model (else `resolveModel(model_name)`, else the run's model). */
  model?: ChatModel;
  resolveModel?: (name: string) => ChatModel;
  /** The run model's context window (tokens), needed by `fraction` rules. */
  contextWindow?: number;
  tokenCounter?: TokenCounter;
  /** Called before history is replaced (DeerFlow's memory flush hook). Errors are ignored. */
  beforeSummarization?: (event: SummarizationEvent) => void | Promise<void>;
};

/** A human message that is a real user turn (not hidden, not a reminder, not a summary). */
export function isRealUserMessage(m: Message): boolean {
  return m.type === "human" && !m.additional_kwargs?.hide_from_ui && !isDynamicContextReminder(m) && m.name !== "summary";
}

function trimTextTokens(text: string, maxTokens: number, strategy: "first" | "last"): string {
  if (!text.trim()) return "";
  const cap = Math.max(1, maxTokens) * 4;
  if (text.length <= cap) return text;
  return strategy === "first" ? text.slice(0, cap) : text.slice(text.length - cap);
}

/**
 * DeerFlow's `DeerFlowSummarizationMiddleware` (before_model) plus the summary
 * projection of DurableContext (wrap_model_call):
 * - triggers (OR): `tokens` / `messages` / `fraction` of `contextWindow`,
 *   counted over the messages plus the prior `summary_text`;
 * - cutoff from `keep` (messages N / tokens / fraction), moved so an AI
 *   message's tool calls and their results stay together;
 * - the latest real user message (by id) and dynamic-context reminders are
 *   preserved;
 * - summary prompt = `summary_prompt` with `{messages}` replaced by
 *   `<existing_summary>` + `<new_messages>` (HTML-escaped; 50/50 token split
 *   of `trim_tokens_to_summarize` when a prior summary exists);
 * - writes `{messages:[removeAll, ...preserved], summary_text}`; failures
 *   leave the state unchanged;
 * - each request gets the summary as a hidden `<durable_context_data>` block
 *   after the leading system messages (unless `project_summary` is false).
 */
export function createSummarizationMiddleware(options: SummarizationOptions = {}): AgentMiddleware {
  const { model, resolveModel, contextWindow, tokenCounter, beforeSummarization, ...rest } = options;
  const o = parseMiddlewareOptions("DeerFlowSummarizationMiddleware", summarizationOptionsSchema, rest);
  const count = tokenCounter ?? approximateTokenCounter;
  const triggers = Array.isArray(o.trigger) ? o.trigger : o.trigger ? [o.trigger] : [];
  const prompt = o.summary_prompt ?? DEFAULT_SUMMARY_PROMPT;

  function shouldSummarize(messages: Message[], tokens: number): boolean {
    for (const t of triggers) {
      if (t.type === "messages" && messages.length >= t.value) return true;
      if (t.type === "tokens" && tokens >= t.value) return true;
      if (t.type === "fraction" && contextWindow && tokens >= Math.floor(contextWindow * t.value)) return true;
    }
    return false;
  }

  function cutoff(messages: Message[]): number {
    const k = o.keep;
    if (k.type === "messages") return cutoffForMessages(messages, Math.floor(k.value));
    const budget = k.type === "tokens" ? k.value : contextWindow ? Math.floor(contextWindow * k.value) : null;
    if (budget === null) return cutoffForMessages(messages, 20);
    return cutoffForTokens(messages, budget, count);
  }

  function trimMessages(messages: Message[]): Message[] {
    if (o.trim_tokens_to_summarize == null) return messages;
    const out: Message[] = [];
    for (let i = messages.length - 1; i >= 0; i--) {
      if (count([messages[i], ...out]) > o.trim_tokens_to_summarize) break;
      out.unshift(messages[i]);
    }
    return out;
  }

  /** The summarizer prompt, or a canned summary (returned as `{canned}`). */
  function buildPrompt(toSummarize: Message[], previous: string | null): { prompt?: string; canned?: string } {
    if (!toSummarize.length) return { canned: NO_HISTORY_SUMMARY };
    let trimmed = trimMessages(toSummarize);
    if (!trimmed.length) trimmed = toSummarize.slice(-1);
    if (!trimmed.length) return { canned: TOO_LONG_SUMMARY };
    const formatted = bufferString(trimmed);
    let prev = previous?.trim() ?? "";
    let fresh = formatted;
    if (o.trim_tokens_to_summarize != null) {
      const max = o.trim_tokens_to_summarize;
      if (prev) {
        const half = Math.max(1, Math.floor(max / 2));
        prev = trimTextTokens(prev, Math.max(1, max - half), "last");
        fresh = trimTextTokens(formatted, half, "first");
      } else {
        fresh = trimTextTokens(formatted, max, "first");
      }
    }
    const parts: string[] = [];
    if (prev) parts.push("<existing_summary>", escapeXmlText(prev), "</existing_summary>", "");
    if (fresh) parts.push("<new_messages>", escapeXmlText(fresh), "</new_messages>");
    if (!parts.length) return { canned: TOO_LONG_SUMMARY };
    return { prompt: prompt.replace("{messages}", parts.join("\n")).trimEnd() };
  }

  async function generate(text: string, runtime: Runtime): Promise<string | null> {
    const candidates: ChatModel[] = [];
    if (model) candidates.push(model);
    else if (o.model_name && resolveModel) {
      try {
        candidates.push(resolveModel(o.model_name));
      } catch {
        // fall back to the run model
      }
    }
    if (!candidates.includes(runtime.model)) candidates.push(runtime.model);
    for (const m of candidates) {
      try {
        const reply = await collectModelStream(m.stream({ messages: [humanMessage(text)], tools: [], signal: runtime.signal }));
        runtime.outcome?.recordUsage("middleware:summarization", reply.usage_metadata);
        const out = contentText(reply.content).trim();
        if (out) return out;
      } catch {
        // try the next candidate
      }
    }
    return null;
  }

  return {
    name: "DeerFlowSummarizationMiddleware",
    async beforeModel(state: AgentState, runtime: Runtime): Promise<HookResult> {
      if (!o.enabled) return;
      const messages = state.messages;
      const previous = typeof state.summary_text === "string" && state.summary_text ? state.summary_text : null;
      const counted = previous ? [...messages, humanMessage(previous, { name: "summary" })] : messages;
      if (!shouldSummarize(counted, count(counted))) return;
      const cut = cutoff(messages);
      if (cut <= 0) return;
      let latestUserId: string | undefined;
      for (let i = messages.length - 1; i >= 0; i--) {
        if (isRealUserMessage(messages[i])) {
          latestUserId = messages[i].id;
          break;
        }
      }
      const rescued: Message[] = [];
      const toSummarize: Message[] = [];
      for (const m of messages.slice(0, cut)) {
        if (isDynamicContextReminder(m) || (latestUserId !== undefined && m.id === latestUserId)) rescued.push(m);
        else toSummarize.push(m);
      }
      if (!toSummarize.length) return;
      const preserved = [...rescued, ...messages.slice(cut)];
      let summary: string | null;
      try {
        const built = buildPrompt(toSummarize, previous);
        summary = built.canned ?? (await generate(built.prompt as string, runtime));
      } catch {
        summary = null;
      }
      if (!summary) return;
      if (beforeSummarization) {
        try {
          await beforeSummarization({ threadId: runtime.threadId, messagesToSummarize: toSummarize, preservedMessages: preserved, summaryText: summary });
        } catch {
          // hooks never break compaction
        }
      }
      return { messages: [removeAllMessages(), ...preserved], summary_text: summary };
    },
    async wrapModelCall(request, handler) {
      const summary = request.state?.summary_text;
      if (!o.project_summary || typeof summary !== "string" || !summary.trim()) return handler(request);
      return handler({ ...request, messages: projectSummary(request.messages, summary) });
    },
  };
}
