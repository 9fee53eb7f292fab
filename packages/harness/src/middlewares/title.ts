import { z } from "zod";
import { contentText, humanMessage } from "../messages";
import type { Message, MessageContent } from "../messages";
import type { ChatModel } from "../models";
import { collectModelStream } from "../models";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState } from "../state";
import { isDynamicContextReminder } from "./dynamic-context";
import { ORIGINAL_USER_CONTENT_KEY } from "./input-sanitization";
import { parseMiddlewareOptions } from "./zod-options";

/** DeerFlow's default title prompt. */
export const DEFAULT_TITLE_PROMPT_TEMPLATE =
  "Generate a concise title (max {max_words} words) for this conversation.\nUser: {user_msg}\nAssistant: {assistant_msg}\n\nReturn ONLY the title, no quotes, no explanation.";

/** `title:` config section. */
export const titleOptionsSchema = z.object({
  enabled: z.boolean().default(true),
  max_words: z.number().int().min(1).max(20).default(6),
  max_chars: z.number().int().min(10).max(200).default(60),
  model_name: z.string().nullish(),
  prompt_template: z.string().default(DEFAULT_TITLE_PROMPT_TEMPLATE),
});

/** Options of {@link createTitleMiddleware}. */
export type TitleOptions = z.input<typeof titleOptionsSchema> & {
  /** The title model (else `resolveModel(model_name)`, else the run's model). Only used when `model_name` is set. */
  model?: ChatModel;
  /** Resolve `model_name` to a model (the lead agent passes its model factory). */
  resolveModel?: (name: string) => ChatModel;
};

function normalise(content: MessageContent | unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b && typeof b === "object" && typeof (b as { text?: unknown }).text === "string" ? (b as { text: string }).text : ""))
      .filter(Boolean)
      .join("\n");
  }
  return "";
}

/**
 * The user's own words: the text they typed as recorded before framework
 * blocks (`<current_uploads>`, …) were prepended to the message, so a title
 * never starts with an injected block.
 */
function userWords(m: Message): string {
  const original = m.additional_kwargs?.[ORIGINAL_USER_CONTENT_KEY];
  return typeof original === "string" ? original.trim() : normalise(m.content);
}

const stripThink = (s: string) => s.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();

function trimChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

const isTitleUser = (m: Message) => m.type === "human" && !isDynamicContextReminder(m);

function format(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (all, k: string) => (k in vars ? String(vars[k]) : all));
}

/**
 * DeerFlow's `TitleMiddleware` (after_model): when enabled, the thread has no
 * title, exactly one user message (dynamic-context reminders excluded) and at
 * least one AI message, writes `{title}`. With `model_name` it asks the model
 * (`prompt_template`, user/assistant cut to 500 chars; `<think>` blocks and
 * quotes stripped; cut to `max_chars`), falling back locally on error or an
 * empty answer. The local fallback is the first user message cut to
 * `min(max_chars, 50)` with `...`, or `New Conversation`.
 */
export function createTitleMiddleware(options: TitleOptions = {}): AgentMiddleware {
  const { model, resolveModel, ...rest } = options;
  const o = parseMiddlewareOptions("TitleMiddleware", titleOptionsSchema, rest);

  const fallback = (user: string): string => {
    const limit = Math.min(o.max_chars, 50);
    if (user.length > limit) return user.slice(0, Math.min(limit, o.max_chars - 3)).trimEnd() + "...";
    return user || "New Conversation";
  };

  const parse = (text: string): string => {
    const t = trimChars(trimChars(stripThink(text).trim(), '"'), "'");
    return t.length > o.max_chars ? t.slice(0, o.max_chars) : t;
  };

  return {
    name: "TitleMiddleware",
    async afterModel(state: AgentState, runtime: Runtime): Promise<HookResult> {
      if (!o.enabled || state.title) return;
      const msgs = state.messages;
      if (msgs.length < 2) return;
      const users = msgs.filter(isTitleUser);
      const ais = msgs.filter((m) => m.type === "ai");
      if (users.length !== 1 || ais.length < 1) return;
      const userText = userWords(users[0]);
      if (!o.model_name) return { title: fallback(userText) };
      try {
        const assistant = stripThink(normalise(ais[0].content));
        const prompt = format(o.prompt_template, { max_words: o.max_words, user_msg: userText.slice(0, 500), assistant_msg: assistant.slice(0, 500) });
        const m = model ?? (resolveModel ? resolveModel(o.model_name) : runtime.model);
        const reply = await collectModelStream(m.stream({ messages: [humanMessage(prompt)], tools: [], signal: runtime.signal, caller: "middleware:title" }));
        runtime.outcome?.recordUsage("middleware:title", reply.usage_metadata);
        const title = parse(contentText(reply.content));
        if (title) return { title };
      } catch {
        // fall back locally
      }
      return { title: fallback(userText) };
    },
  };
}
