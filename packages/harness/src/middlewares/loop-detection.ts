import { z } from "zod";
import { humanMessage } from "../messages";
import type { AIMessage } from "../messages";
import type { AgentMiddleware, HookResult, ModelCallRequest, Runtime } from "../runtime/types";
import type { AgentState } from "../state";
import { hashToolCalls } from "./loop-detection-hash";
import { stripToolCalls } from "./loop-detection-strip";
import { parseMiddlewareOptions } from "./zod-options";

/** Warning queued when the same tool-call set repeats `warn_threshold` times. */
export const LOOP_WARNING_MESSAGE =
  "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.";
/** Appended to the forced final answer when the same call set repeats `hard_limit` times. */
export const LOOP_HARD_STOP_MESSAGE =
  "[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final answer with results collected so far.";

/** Per-tool frequency warning text. */
export function toolFrequencyWarning(toolName: string, count: number): string {
  return `[LOOP DETECTED] You have called ${toolName} ${count} times without producing a final answer. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.`;
}

/** Per-tool frequency hard-stop text. */
export function toolFrequencyHardStop(toolName: string, count: number): string {
  return `[FORCED STOP] Tool ${toolName} called ${count} times — exceeded the per-tool safety limit. Producing final answer with results collected so far.`;
}

/** Max warnings waiting for the next model call of one run. */
export const MAX_PENDING_LOOP_WARNINGS = 4;

const positive = z.number().int().min(1);

const overrideSchema = z
  .object({ warn: positive, hard_limit: positive })
  .refine((o) => o.hard_limit >= o.warn, { message: "hard_limit must be >= warn", path: ["hard_limit"] });

/** `loop_detection:` config section (DeerFlow's `LoopDetectionConfig`). */
export const loopDetectionOptionsSchema = z
  .object({
    enabled: z.boolean().default(true),
    warn_threshold: positive.default(3),
    hard_limit: positive.default(5),
    window_size: positive.default(20),
    max_tracked_threads: positive.default(100),
    tool_freq_warn: positive.default(30),
    tool_freq_hard_limit: positive.default(50),
    tool_freq_overrides: z.record(z.string(), overrideSchema).nullish().transform((v) => v ?? {}),
  })
  .superRefine((o, ctx) => {
    if (o.hard_limit < o.warn_threshold) {
      ctx.addIssue({ code: "custom", path: ["hard_limit"], message: "hard_limit must be greater than or equal to warn_threshold" });
    }
    if (o.tool_freq_hard_limit < o.tool_freq_warn) {
      ctx.addIssue({ code: "custom", path: ["tool_freq_hard_limit"], message: "tool_freq_hard_limit must be greater than or equal to tool_freq_warn" });
    }
  });

/** Options of {@link createLoopDetectionMiddleware} (snake_case, as in config.yaml). */
export type LoopDetectionOptions = z.input<typeof loopDetectionOptionsSchema>;

interface ThreadTrack {
  history: string[];
  warned: Set<string>;
  names: string[];
  nameCounts: Map<string, number>;
  freqWarned: Set<string>;
}

/**
 * DeerFlow's `LoopDetectionMiddleware`: detects repeated tool-call sets per
 * thread (LRU of `max_tracked_threads`) and per-tool call frequency.
 * Warnings are queued and injected as a `HumanMessage(name="loop_warning")`
 * at the end of the NEXT model request (request only, never state); a hard
 * stop strips the tool calls of the offending AI message and records
 * `outcome.stopReason = "loop_capped"`.
 */
export function createLoopDetectionMiddleware(options: LoopDetectionOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("LoopDetectionMiddleware", loopDetectionOptionsSchema, options);
  const overrides = o.tool_freq_overrides as Record<string, { warn: number; hard_limit: number }>;
  const freqWindow = Math.max(o.window_size, o.tool_freq_hard_limit, ...Object.values(overrides).map((v) => v.hard_limit));
  const threads = new Map<string, ThreadTrack>();
  const pending = new Map<string, string[]>();
  const maxPendingKeys = Math.max(1, o.max_tracked_threads * 2);

  const pendingKey = (rt: Runtime) => `${rt.threadId}\u0000${rt.runId}`;

  function track(threadId: string): ThreadTrack {
    let t = threads.get(threadId);
    if (t) {
      threads.delete(threadId);
    } else {
      t = { history: [], warned: new Set(), names: [], nameCounts: new Map(), freqWarned: new Set() };
      while (threads.size >= o.max_tracked_threads) {
        const oldest = threads.keys().next().value as string;
        threads.delete(oldest);
      }
    }
    threads.set(threadId, t);
    return t;
  }

  function check(last: AIMessage, threadId: string): { text: string; hard: boolean } | null {
    const t = track(threadId);
    const hash = hashToolCalls(last.tool_calls);
    t.history.push(hash);
    if (t.history.length > o.window_size) t.history.splice(0, t.history.length - o.window_size);
    for (const h of [...t.warned]) if (!t.history.includes(h)) t.warned.delete(h);
    const count = t.history.filter((h) => h === hash).length;
    if (count >= o.hard_limit) return { text: LOOP_HARD_STOP_MESSAGE, hard: true };
    if (count >= o.warn_threshold && !t.warned.has(hash)) {
      t.warned.add(hash);
      return { text: LOOP_WARNING_MESSAGE, hard: false };
    }
    for (const call of last.tool_calls) {
      const name = call.name;
      if (!name) continue;
      t.names.push(name);
      t.nameCounts.set(name, (t.nameCounts.get(name) ?? 0) + 1);
      while (t.names.length > freqWindow) {
        const old = t.names.shift() as string;
        const c = (t.nameCounts.get(old) ?? 1) - 1;
        if (c <= 0) t.nameCounts.delete(old);
        else t.nameCounts.set(old, c);
      }
      const freq = t.nameCounts.get(name) ?? 0;
      const warn = overrides[name]?.warn ?? o.tool_freq_warn;
      const hard = overrides[name]?.hard_limit ?? o.tool_freq_hard_limit;
      if (freq >= hard) return { text: toolFrequencyHardStop(name, freq), hard: true };
      if (freq >= warn) {
        if (!t.freqWarned.has(name)) {
          t.freqWarned.add(name);
          return { text: toolFrequencyWarning(name, freq), hard: false };
        }
      } else {
        t.freqWarned.delete(name);
      }
    }
    return null;
  }

  function queue(rt: Runtime, warning: string): void {
    const key = pendingKey(rt);
    const list = pending.get(key) ?? [];
    pending.delete(key);
    if (!list.includes(warning)) list.push(warning);
    if (list.length > MAX_PENDING_LOOP_WARNINGS) list.splice(0, list.length - MAX_PENDING_LOOP_WARNINGS);
    pending.set(key, list);
    while (pending.size > maxPendingKeys) pending.delete(pending.keys().next().value as string);
  }

  return {
    name: "LoopDetectionMiddleware",
    beforeAgent(_state, runtime) {
      const prefix = `${runtime.threadId}\u0000`;
      const mine = pendingKey(runtime);
      for (const key of [...pending.keys()]) if (key.startsWith(prefix) && key !== mine) pending.delete(key);
    },
    afterModel(state: AgentState, runtime): HookResult {
      const last = state.messages[state.messages.length - 1];
      if (!last || last.type !== "ai" || last.tool_calls.length === 0) return;
      const hit = check(last, runtime.threadId);
      if (!hit) return;
      if (hit.hard) {
        runtime.outcome.setStopReason("loop_capped", { overwrite: true });
        return { messages: [stripToolCalls(last, hit.text)] };
      }
      queue(runtime, hit.text);
      return;
    },
    afterAgent(_state, runtime) {
      pending.delete(pendingKey(runtime));
    },
    async wrapModelCall(request: ModelCallRequest, handler) {
      const key = pendingKey(request.runtime);
      const warnings = pending.get(key);
      if (!warnings || warnings.length === 0) return handler(request);
      pending.delete(key);
      const text = [...new Set(warnings)].join("\n\n");
      return handler({ ...request, messages: [...request.messages, humanMessage(text, { name: "loop_warning" })] });
    },
  };
}
