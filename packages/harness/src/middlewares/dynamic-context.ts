import { z } from "zod";
import { contentText, humanMessage, newMessageId, systemMessage } from "../messages";
import type { HumanMessage, Message, SystemMessage } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState } from "../state";
import { ORIGINAL_USER_CONTENT_KEY } from "./input-sanitization";
import { parseMiddlewareOptions } from "./zod-options";

/** `additional_kwargs` flag of every hidden dynamic-context message. */
export const DYNAMIC_CONTEXT_REMINDER_KEY = "dynamic_context_reminder";
/** `additional_kwargs` key holding the authoritative injected date. */
export const REMINDER_DATE_KEY = "reminder_date";
/** Suffix of the moved user message's id after the ID-swap. */
export const INJECTED_USER_MESSAGE_ID_SUFFIX = "__user";
/** Suffix of the hidden memory message's id. */
export const INJECTED_MEMORY_MESSAGE_ID_SUFFIX = "__memory";
/** Max time to wait for the memory provider. */
export const MEMORY_LOAD_TIMEOUT_MS = 5000;

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** `YYYY-MM-DD, Weekday` in local time (Python's `%Y-%m-%d, %A`). */
export function formatReminderDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}, ${WEEKDAYS[d.getDay()]}`;
}

/** The date reminder block. */
export function currentDateReminder(date: string): string {
  return ["<system-reminder>", `<current_date>${date}</current_date>`, "</system-reminder>"].join("\n");
}

/** True for a hidden dynamic-context reminder (date SystemMessage or memory HumanMessage). */
export function isDynamicContextReminder(m: Message | undefined | null): boolean {
  return !!m && (m.type === "human" || m.type === "system") && m.additional_kwargs?.[DYNAMIC_CONTEXT_REMINDER_KEY] === true;
}

/** The id a user message had before the ID-swap (`x__user` → `x`). */
export function stripInjectedUserMessageIdSuffix(id: string | undefined): string | undefined {
  if (id && id.endsWith(INJECTED_USER_MESSAGE_ID_SUFFIX)) return id.slice(0, -INJECTED_USER_MESSAGE_ID_SUFFIX.length) || id;
  return id;
}

const DATE_RE = /<current_date>([^<]+)<\/current_date>/;

/** The most recently injected date in `messages`, or null when none was injected yet. */
export function lastInjectedDate(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isDynamicContextReminder(m)) continue;
    const d = m.additional_kwargs?.[REMINDER_DATE_KEY];
    if (typeof d === "string" && d) return d;
    if (m.type === "system") {
      const match = DATE_RE.exec(typeof m.content === "string" ? m.content : JSON.stringify(m.content));
      if (match) return match[1];
    }
  }
  return null;
}

function isInjectionTarget(m: Message): m is HumanMessage {
  if (m.type !== "human") return false;
  if (isDynamicContextReminder(m)) return false;
  if (m.name === "summary") return false;
  if (m.id && m.id.endsWith(INJECTED_USER_MESSAGE_ID_SUFFIX)) return false;
  return true;
}

/** What the memory provider is asked for: the current user message (relevance ranking) and where the run is. */
export interface MemoryRequest {
  /** The user's own words in the current turn. */
  query: string;
  threadId: string;
  runId: string;
}

/** A memory block plus what it holds (reported into the run outcome under `memory`). */
export interface MemoryInjection {
  text: string;
  report?: unknown;
}

/** Additional-kwargs key on the hidden memory message holding the provider's report (UI: "remembered: …"). */
export const MEMORY_REPORT_KEY = "memory_recall";

/** Loads the memory block for a user (slot for the memory subsystem). */
export type MemoryProvider = (userId: string, agentName: string | null, request?: MemoryRequest) => Promise<string | MemoryInjection | null | undefined>;

/** `memory:` keys this middleware reads, plus injectables. */
export const dynamicContextOptionsSchema = z.object({
  injection_enabled: z.boolean().default(true),
  agent_name: z.string().nullish(),
  memory_timeout_ms: z.number().int().min(1).default(MEMORY_LOAD_TIMEOUT_MS),
});

/** Options of {@link createDynamicContextMiddleware}. */
export type DynamicContextOptions = z.input<typeof dynamicContextOptionsSchema> & {
  /** Memory loader; none by default (no memory message is injected). */
  memoryProvider?: MemoryProvider;
  /** Clock (tests). */
  now?: () => Date;
};

/** Build the ID-swap messages for `original`. */
export function idSwapMessages(original: HumanMessage, reminder: string, date: string, memory?: string | null, memoryReport?: unknown): Array<SystemMessage | HumanMessage> {
  const id = original.id || newMessageId();
  const out: Array<SystemMessage | HumanMessage> = [
    systemMessage(reminder, { id, additional_kwargs: { hide_from_ui: true, [DYNAMIC_CONTEXT_REMINDER_KEY]: true, [REMINDER_DATE_KEY]: date } }),
  ];
  if (memory) {
    out.push(
      humanMessage(memory, {
        id: `${id}${INJECTED_MEMORY_MESSAGE_ID_SUFFIX}`,
        additional_kwargs: { hide_from_ui: true, [DYNAMIC_CONTEXT_REMINDER_KEY]: true, ...(memoryReport !== undefined ? { [MEMORY_REPORT_KEY]: memoryReport } : {}) },
      }),
    );
  }
  out.push(
    humanMessage(original.content, {
      id: `${id}${INJECTED_USER_MESSAGE_ID_SUFFIX}`,
      name: original.name ?? undefined,
      additional_kwargs: { ...original.additional_kwargs },
      response_metadata: { ...original.response_metadata },
    }),
  );
  return out;
}

class MemoryTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new MemoryTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/**
 * DeerFlow's `DynamicContextMiddleware` (before_agent). The system prompt stays
 * static; the current date (and memory, when a provider is given) is injected
 * once per conversation with the ID-swap trick: the last user message's id is
 * reused by a hidden `SystemMessage` reminder (replaced in place), followed by
 * an optional hidden `<memory>` HumanMessage (`{id}__memory`, role user on
 * purpose) and the original content as `{id}__user`. When the date changes
 * (midnight) a date-only reminder is injected before the current turn.
 * Memory loading is bounded by 5 s; on timeout nothing is injected this turn
 * (the next turn retries), as in DeerFlow. Memory errors inject the date only.
 */
export function createDynamicContextMiddleware(options: DynamicContextOptions = {}): AgentMiddleware {
  const { memoryProvider, now, ...rest } = options;
  const o = parseMiddlewareOptions("DynamicContextMiddleware", dynamicContextOptionsSchema, rest);
  const clock = now ?? (() => new Date());

  async function loadMemory(runtime: Runtime, target: HumanMessage): Promise<{ text: string; report?: unknown } | null> {
    if (!memoryProvider || !o.injection_enabled) return null;
    const { userId } = runtime.context.identity;
    const agentName = o.agent_name ?? runtime.context.identity.agentName;
    const original = target.additional_kwargs?.[ORIGINAL_USER_CONTENT_KEY];
    const request: MemoryRequest = { query: typeof original === "string" ? original : contentText(target.content), threadId: runtime.threadId, runId: runtime.runId };
    let raw: string | MemoryInjection | null | undefined;
    try {
      raw = await withTimeout(Promise.resolve().then(() => memoryProvider(userId, agentName, request)), o.memory_timeout_ms);
    } catch (err) {
      if (err instanceof MemoryTimeout) throw err;
      return null;
    }
    const text = (typeof raw === "string" ? raw : (raw?.text ?? "")).trim();
    if (!text) return null;
    const report = typeof raw === "object" && raw ? raw.report : undefined;
    if (report !== undefined) runtime.outcome?.report("memory", report);
    return { text: text.startsWith("<memory>") ? text : `<memory>\n${text}\n</memory>`, report };
  }

  return {
    name: "DynamicContextMiddleware",
    async beforeAgent(state: AgentState, runtime: Runtime): Promise<HookResult> {
      const messages = state.messages;
      if (!messages.length) return;
      const date = formatReminderDate(clock());
      const last = lastInjectedDate(messages);
      let target: HumanMessage | undefined;
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i];
        if (isInjectionTarget(m)) {
          target = m;
          break;
        }
      }
      if (!target) return;
      if (last === null) {
        let memory: { text: string; report?: unknown } | null;
        try {
          memory = await loadMemory(runtime, target);
        } catch {
          return; // timed out: skip injection this turn
        }
        return { messages: idSwapMessages(target, currentDateReminder(date), date, memory?.text, memory?.report) };
      }
      if (last === date) return;
      return { messages: idSwapMessages(target, currentDateReminder(date), date) };
    },
  };
}
