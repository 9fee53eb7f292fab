import { z } from "zod";
import type { AIMessage } from "../messages";
import { aiMessage } from "../messages";
import type { AgentMiddleware, ModelCallRequest } from "../runtime/types";
import { CircuitBreaker } from "./llm-error-circuit-breaker";
import { classifyModelError, errorDetail, retryAfterMs } from "./llm-error-classify";
import type { LLMErrorReason } from "./llm-error-classify";
import { isControlFlowError } from "./tool-error-handling-control-flow";
import { parseMiddlewareOptions } from "./zod-options";

const posInt = z.number().int().min(1);
const nonNegInt = z.number().int().min(0);

/** DeerFlow's `llm_call:` config section. */
export const llmCallSectionSchema = z.object({
  max_concurrent_calls: nonNegInt.default(0),
  retry_max_attempts: posInt.default(3),
  retry_base_delay_ms: nonNegInt.default(1000),
  retry_cap_delay_ms: nonNegInt.default(8000),
  burst_retry_base_delay_ms: nonNegInt.default(5000),
});

/** DeerFlow's `circuit_breaker:` config section. */
export const circuitBreakerSectionSchema = z.object({
  failure_threshold: posInt.default(5),
  recovery_timeout_sec: z.number().min(0).default(60),
});

type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

const optionsSchema = z.object({
  llm_call: llmCallSectionSchema.nullish().transform((v) => llmCallSectionSchema.parse(v ?? {})),
  circuit_breaker: circuitBreakerSectionSchema.nullish().transform((v) => circuitBreakerSectionSchema.parse(v ?? {})),
  sleep: z.custom<SleepFn>((v) => typeof v === "function", "must be a function").optional(),
  random: z.custom<() => number>((v) => typeof v === "function", "must be a function").optional(),
  now: z.custom<() => number>((v) => typeof v === "function", "must be a function").optional(),
});

/** Options of {@link createLLMErrorHandlingMiddleware}. */
export interface LLMErrorHandlingOptions {
  /** The `llm_call:` config section. */
  llm_call?: Partial<z.input<typeof llmCallSectionSchema>> | null;
  /** The `circuit_breaker:` config section. */
  circuit_breaker?: Partial<z.input<typeof circuitBreakerSectionSchema>> | null;
  /** Sleep used between retries (tests inject an instant one). Default: abortable `setTimeout`. */
  sleep?: SleepFn;
  /** Random source in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
  /** Clock in ms for the circuit breaker. Default `Date.now`. */
  now?: () => number;
}

/** Reason-specific retry budgets (can only tighten `retry_max_attempts`). */
const REASON_RETRY_BUDGETS: Partial<Record<LLMErrorReason, number>> = { burst_rate: 2, unreachable: 2 };

/** Wait before the one retry of a refused local connection (a server just starting gets this long). */
const UNREACHABLE_RETRY_MS = 250;

/** Text shown when the circuit breaker fast-fails a call. */
export const CIRCUIT_OPEN_TEXT =
  "The configured LLM provider is currently unavailable due to continuous failures. Circuit breaker is engaged to protect the system. Please wait a moment before trying again.";

/** User-facing text of the final fallback message for a failure reason. */
export function llmErrorUserMessage(reason: LLMErrorReason | string, detail: string): string {
  switch (reason) {
    case "quota":
      return "The configured LLM provider rejected the request because the account is out of quota, billing is unavailable, or usage is restricted. Please fix the provider account and try again.";
    case "auth":
      return "The configured LLM provider rejected the request because authentication or access is invalid. Please check the provider credentials and try again.";
    case "burst_rate":
      return "The configured LLM provider is temporarily throttling requests because the request rate increased too quickly (burst-rate limit). Please wait a moment and try again.";
    case "unreachable":
      return `The model server is not reachable: ${detail} Start it, or correct base_url in config.yaml; \`deerflow doctor\` checks it.`;
    case "busy":
    case "transient":
      return "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment and continue the conversation.";
    default:
      return `LLM request failed: ${detail}`;
  }
}

/** The `llm_retry` progress message. */
export function llmRetryMessage(attempt: number, maxAttempts: number, waitMs: number, reason: string): string {
  const seconds = Math.max(1, Math.round(waitMs / 1000));
  const reasonText =
    reason === "busy" ? "provider is busy" : reason === "unreachable" ? "model server refused the connection" : reason === "burst_rate" ? "provider is throttling request burst rate" : "provider request failed temporarily";
  return `LLM request retry ${attempt}/${maxAttempts}: ${reasonText}. Retrying in ${seconds}s.`;
}

function fallbackMessage(content: string, errorType: string, reason: string, detail: string): AIMessage {
  return aiMessage(content, {
    additional_kwargs: { deerflow_error_fallback: true, error_type: errorType, error_reason: reason, error_detail: detail },
  });
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A FIFO semaphore capping in-flight model calls process-wide (frozen at first construction). */
class CallLimiter {
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(readonly limit: number) {}
  async acquire(signal?: AbortSignal): Promise<void> {
    if (this.inFlight < this.limit) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason ?? new Error("aborted"));
      };
      this.waiters.push(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
  release(): void {
    const next = this.waiters.shift();
    if (next) next(); // the permit moves to the waiter
    else this.inFlight = Math.max(0, this.inFlight - 1);
  }
}

let processLimiter: CallLimiter | null = null;
let limiterResolved = false;

function resolveLimiter(limit: number): void {
  if (limiterResolved) return;
  limiterResolved = true;
  if (limit > 0) processLimiter = new CallLimiter(limit);
}

/** Test hook: forget the frozen process-wide concurrency cap. */
export function resetLLMCallLimiterForTests(): void {
  processLimiter = null;
  limiterResolved = false;
}

/**
 * DeerFlow's LLMErrorHandlingMiddleware. Retries transient model failures with
 * decorrelated jitter (`Retry-After` honoured verbatim), emits an `llm_retry`
 * custom event before each retry, trips a per-model circuit breaker after
 * repeated exhausted failures, and on final failure returns an AI message
 * flagged `deerflow_error_fallback` instead of throwing. Interrupts and
 * cancellations propagate.
 */
export function createLLMErrorHandlingMiddleware(options: LLMErrorHandlingOptions = {}): AgentMiddleware {
  const opts = parseMiddlewareOptions("LLMErrorHandlingMiddleware", optionsSchema, options);
  const cfg = opts.llm_call;
  const cb = opts.circuit_breaker;
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  resolveLimiter(cfg.max_concurrent_calls);
  const breakers = new Map<string, CircuitBreaker>();
  const breakerFor = (request: ModelCallRequest): CircuitBreaker => {
    const key = `${request.model.provider}:${request.model.modelName}`;
    let b = breakers.get(key);
    if (!b) {
      b = new CircuitBreaker(cb.failure_threshold, cb.recovery_timeout_sec * 1000, now);
      breakers.set(key, b);
    }
    return b;
  };

  const nextDelay = (prev: number | null, err: unknown, reason: LLMErrorReason): number => {
    const after = retryAfterMs(err);
    if (after !== undefined) return after;
    if (reason === "unreachable") return Math.min(UNREACHABLE_RETRY_MS, cfg.retry_base_delay_ms);
    const base = reason === "burst_rate" ? cfg.burst_retry_base_delay_ms : cfg.retry_base_delay_ms;
    const cap = cfg.retry_cap_delay_ms;
    const seed = prev ?? base;
    const high = Math.min(cap, Math.max(base, seed * 3));
    if (high < base) return cap;
    return base + Math.floor(random() * (high - base + 1));
  };

  const attemptOnce = async (request: ModelCallRequest, handler: (r: ModelCallRequest) => Promise<AIMessage>) => {
    const limiter = processLimiter;
    if (!limiter) return handler(request);
    await limiter.acquire(request.runtime?.signal);
    try {
      return await handler(request);
    } finally {
      limiter.release();
    }
  };

  return {
    name: "LLMErrorHandlingMiddleware",
    async wrapModelCall(request, handler) {
      const breaker = breakerFor(request);
      const markRunError = (reason: string, detail: string) => {
        // DeerFlow ends such a run with status `error` (the fallback message is shown, no error event).
        request.runtime?.outcome?.setError({ type: "llm_error", reason: `${reason}: ${detail}` });
      };
      if (breaker.isOpen()) {
        markRunError("circuit_open", "LLM circuit breaker is open");
        return fallbackMessage(CIRCUIT_OPEN_TEXT, "CircuitBreakerOpen", "circuit_open", "LLM circuit breaker is open");
      }
      const signal = request.runtime?.signal;
      let attempt = 1;
      let prev: number | null = null;
      for (;;) {
        try {
          const response = await attemptOnce(request, handler);
          breaker.recordSuccess();
          return response;
        } catch (err) {
          if (isControlFlowError(err, signal)) {
            breaker.releaseProbe();
            throw err;
          }
          const { retriable, reason } = classifyModelError(err);
          const maxAttempts = Math.min(cfg.retry_max_attempts, REASON_RETRY_BUDGETS[reason] ?? Infinity);
          if (retriable && attempt < maxAttempts) {
            const waitMs = nextDelay(prev, err, reason);
            prev = waitMs;
            try {
              request.runtime?.writer({
                type: "llm_retry",
                attempt,
                max_attempts: maxAttempts,
                wait_ms: waitMs,
                reason,
                message: llmRetryMessage(attempt, maxAttempts, waitMs, reason),
              });
            } catch {
              // a broken stream writer never blocks the retry
            }
            try {
              await sleep(waitMs, signal);
            } catch (sleepErr) {
              breaker.releaseProbe();
              throw sleepErr; // cancelled while waiting
            }
            attempt++;
            continue;
          }
          if (retriable && reason !== "burst_rate") breaker.recordFailure();
          else breaker.releaseProbe();
          const detail = errorDetail(err);
          const errorType = err instanceof Error ? err.constructor.name : typeof err;
          markRunError(reason, detail);
          return fallbackMessage(llmErrorUserMessage(reason, detail), errorType, reason, detail);
        }
      }
    },
  };
}
