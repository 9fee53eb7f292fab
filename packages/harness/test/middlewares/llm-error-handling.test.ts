import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, ModelCallError, RunCancelledError } from "../../src/errors";
import { aiMessage, contentText, humanMessage } from "../../src/messages";
import type { AIMessage } from "../../src/messages";
import { classifyModelError } from "../../src/middlewares/llm-error-classify";
import {
  CIRCUIT_OPEN_TEXT,
  createLLMErrorHandlingMiddleware,
  resetLLMCallLimiterForTests,
} from "../../src/middlewares/llm-error-handling";
import type { LLMErrorHandlingOptions } from "../../src/middlewares/llm-error-handling";
import { createAgent, GraphInterrupt } from "../../src/runtime";
import type { StreamEvent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { makeRuntime, modelRequest } from "./_fixtures-guards";

afterEach(() => resetLLMCallLimiterForTests());

const err = (kind: ConstructorParameters<typeof ModelCallError>[1]["kind"], extra: Partial<{ status: number; retryAfterMs: number; providerCode: string; message: string }> = {}) =>
  new ModelCallError(extra.message ?? `boom ${kind}`, { kind, ...extra });

function setup(failures: unknown[], options: LLMErrorHandlingOptions = {}, rnd = 0) {
  const sleeps: number[] = [];
  const mw = createLLMErrorHandlingMiddleware({ sleep: async (ms) => void sleeps.push(ms), random: () => rnd, ...options });
  const runtime = makeRuntime();
  let calls = 0;
  const queue = [...failures];
  const handler = async () => {
    calls++;
    const next = queue.shift();
    if (next instanceof Error || (next && typeof next === "object" && !("type" in (next as object)))) throw next;
    return (next as AIMessage) ?? aiMessage("ok");
  };
  const call = () => mw.wrapModelCall!(modelRequest([humanMessage("q")], runtime), handler);
  return { mw, sleeps, runtime, call, calls: () => calls };
}

describe("LLMErrorHandlingMiddleware classification", () => {
  it.each([
    [err("rate_limit", { status: 429 }), true, "transient"],
    [err("server", { status: 503 }), true, "transient"],
    [err("timeout"), true, "transient"],
    [err("connection"), true, "transient"],
    [err("empty_response"), true, "transient"],
    [err("unknown", { status: 425 }), true, "transient"],
    [err("unknown", { message: "Server busy, please try again later" }), true, "busy"],
    [err("unknown", { message: "服务繁忙，请稍后重试" }), true, "busy"],
    [err("rate_limit", { status: 429, message: "limit_burst_rate exceeded" }), true, "burst_rate"],
    [err("quota", { status: 429 }), false, "quota"],
    [err("rate_limit", { status: 429, providerCode: "insufficient_quota" }), false, "quota"],
    [err("unknown", { message: "账户余额不足" }), false, "quota"],
    [err("auth", { status: 401 }), false, "auth"],
    [err("unknown", { status: 403, message: "Invalid API key provided" }), false, "auth"],
    [err("bad_request", { status: 400 }), false, "generic"],
    [new TypeError("x is not a function"), false, "generic"],
  ])("%s → retriable=%s reason=%s", (e, retriable, reason) => {
    expect(classifyModelError(e)).toEqual({ retriable, reason });
  });
});

describe("LLMErrorHandlingMiddleware", () => {
  it("validates options", () => {
    expect(() => createLLMErrorHandlingMiddleware({ llm_call: { retry_max_attempts: 0 } })).toThrow(ConfigError);
    expect(() => createLLMErrorHandlingMiddleware({ circuit_breaker: { failure_threshold: -1 } })).toThrow(/circuit_breaker\.failure_threshold/);
    expect(createLLMErrorHandlingMiddleware({ llm_call: null, circuit_breaker: null }).name).toBe("LLMErrorHandlingMiddleware");
  });

  it("retries with decorrelated jitter inside [base, min(cap, 3*prev)] and emits llm_retry events", async () => {
    const s = setup([err("server", { status: 502 }), err("server", { status: 502 })], {}, 0.999999);
    const res = await s.call();
    expect(contentText(res.content)).toBe("ok");
    expect(s.calls()).toBe(3);
    // random≈1 → top of the window: first min(8000, 3*1000)=3000, then min(8000, 3*3000)=8000
    expect(s.sleeps).toEqual([3000, 8000]);
    expect(s.runtime.events).toEqual([
      { type: "llm_retry", attempt: 1, max_attempts: 3, wait_ms: 3000, reason: "transient", message: "LLM request retry 1/3: provider request failed temporarily. Retrying in 3s." },
      { type: "llm_retry", attempt: 2, max_attempts: 3, wait_ms: 8000, reason: "transient", message: "LLM request retry 2/3: provider request failed temporarily. Retrying in 8s." },
    ]);
  });

  it("lowest jitter draws the base delay", async () => {
    const s = setup([err("timeout"), err("timeout")], {}, 0);
    await s.call();
    expect(s.sleeps).toEqual([1000, 1000]);
  });

  it("honours Retry-After verbatim", async () => {
    const s = setup([err("rate_limit", { status: 429, retryAfterMs: 12345 })]);
    await s.call();
    expect(s.sleeps).toEqual([12345]);
    expect(s.runtime.events[0]).toMatchObject({ wait_ms: 12345, message: "LLM request retry 1/3: provider request failed temporarily. Retrying in 12s." });
  });

  it("burst-rate uses the burst base and a budget of 2 attempts", async () => {
    const burst = () => err("rate_limit", { status: 429, message: "limit_burst_rate" });
    const s = setup([burst(), burst(), burst()], {}, 0.999999);
    const res = await s.call();
    expect(s.calls()).toBe(2);
    expect(s.sleeps).toEqual([8000]); // window [5000, min(8000, 15000)]
    expect(s.runtime.events[0]).toMatchObject({ max_attempts: 2, reason: "burst_rate", message: expect.stringContaining("throttling request burst rate") });
    expect(res.additional_kwargs).toMatchObject({ deerflow_error_fallback: true, error_reason: "burst_rate" });
  });

  it("does not retry quota/auth errors and returns the per-reason fallback", async () => {
    const q = setup([err("quota", { status: 429, providerCode: "insufficient_quota" })]);
    const res = await q.call();
    expect(q.calls()).toBe(1);
    expect(q.sleeps).toEqual([]);
    expect(res.type).toBe("ai");
    expect(res.additional_kwargs).toEqual({
      deerflow_error_fallback: true,
      error_type: "ModelCallError",
      error_reason: "quota",
      error_detail: "boom quota",
    });
    expect(contentText(res.content)).toMatch(/out of quota/);
    const a = setup([err("auth", { status: 401 })]);
    expect(contentText((await a.call()).content)).toMatch(/authentication or access is invalid/);
    const g = setup([err("bad_request", { status: 400, message: "bad schema" })]);
    expect(contentText((await g.call()).content)).toBe("LLM request failed: bad schema");
  });

  it("after exhausting retries returns the transient fallback instead of throwing", async () => {
    const s = setup([err("server", { status: 500 }), err("server", { status: 500 }), err("server", { status: 500 })]);
    const res = await s.call();
    expect(s.calls()).toBe(3);
    expect(contentText(res.content)).toBe(
      "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment and continue the conversation.",
    );
    expect(res.additional_kwargs.error_reason).toBe("transient");
  });

  it("respects retry_max_attempts: 1 (no retry)", async () => {
    const s = setup([err("server", { status: 500 })], { llm_call: { retry_max_attempts: 1 } });
    await s.call();
    expect(s.calls()).toBe(1);
    expect(s.sleeps).toEqual([]);
  });

  it("propagates interrupts and cancellations", async () => {
    await expect(setup([new GraphInterrupt("ask")]).call()).rejects.toThrow(GraphInterrupt);
    await expect(setup([new RunCancelledError("stop")]).call()).rejects.toThrow(RunCancelledError);
    const abortErr = new Error("aborted");
    abortErr.name = "AbortError";
    await expect(setup([abortErr]).call()).rejects.toThrow("aborted");
  });

  it("a cancellation during the backoff sleep propagates", async () => {
    const controller = new AbortController();
    const mw = createLLMErrorHandlingMiddleware({ llm_call: { retry_base_delay_ms: 50 } });
    const runtime = makeRuntime({ signal: controller.signal });
    const p = mw.wrapModelCall!(modelRequest([humanMessage("q")], runtime), async () => {
      throw err("server", { status: 500 });
    });
    setTimeout(() => controller.abort(new RunCancelledError("user")), 5);
    await expect(p).rejects.toThrow(RunCancelledError);
  });

  it("circuit breaker: opens after 5 exhausted failures for 60 s, then admits a single half-open probe", async () => {
    let now = 1_000_000;
    const sleeps: number[] = [];
    const mw = createLLMErrorHandlingMiddleware({ sleep: async (ms) => void sleeps.push(ms), now: () => now, llm_call: { retry_max_attempts: 1 } });
    let calls = 0;
    let fail = true;
    const handler = async () => {
      calls++;
      if (fail) throw err("server", { status: 503 });
      return aiMessage("recovered");
    };
    const call = () => mw.wrapModelCall!(modelRequest([humanMessage("q")]), handler);
    for (let i = 0; i < 5; i++) await call();
    expect(calls).toBe(5);
    const open = await call();
    expect(calls).toBe(5); // fast-fail, no provider call
    expect(contentText(open.content)).toBe(CIRCUIT_OPEN_TEXT);
    expect(open.additional_kwargs).toMatchObject({ deerflow_error_fallback: true, error_type: "CircuitBreakerOpen", error_reason: "circuit_open" });
    now += 59_999;
    await call();
    expect(calls).toBe(5);
    now += 1;
    // half-open: the failing probe re-opens immediately
    await call();
    expect(calls).toBe(6);
    await call();
    expect(calls).toBe(6);
    now += 60_000;
    fail = false;
    // two concurrent callers while half-open: only one probe reaches the provider
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slowHandler = async () => {
      calls++;
      await gate;
      return aiMessage("recovered");
    };
    const p1 = mw.wrapModelCall!(modelRequest([humanMessage("q")]), slowHandler);
    const r2 = await mw.wrapModelCall!(modelRequest([humanMessage("q")]), slowHandler);
    expect(r2.additional_kwargs.error_reason).toBe("circuit_open");
    release();
    expect(contentText((await p1).content)).toBe("recovered");
    expect(calls).toBe(7);
    expect(contentText((await call()).content)).toBe("recovered"); // closed again
  });

  it("non-retriable errors do not count toward the breaker", async () => {
    const mw = createLLMErrorHandlingMiddleware({ sleep: async () => {} });
    let calls = 0;
    const handler = async (): Promise<AIMessage> => {
      calls++;
      throw err("auth", { status: 401 });
    };
    for (let i = 0; i < 8; i++) await mw.wrapModelCall!(modelRequest([humanMessage("q")]), handler);
    expect(calls).toBe(8);
  });

  it("breaker state is per model", async () => {
    const mw = createLLMErrorHandlingMiddleware({ sleep: async () => {}, llm_call: { retry_max_attempts: 1 } });
    const bad = new ScriptedModel([], { modelName: "bad" });
    const good = new ScriptedModel([], { modelName: "good" });
    const runtime = makeRuntime();
    for (let i = 0; i < 5; i++) await mw.wrapModelCall!(modelRequest([humanMessage("q")], runtime, bad), async () => { throw err("server", { status: 500 }); });
    const blocked = await mw.wrapModelCall!(modelRequest([humanMessage("q")], runtime, bad), async () => aiMessage("x"));
    expect(blocked.additional_kwargs.error_reason).toBe("circuit_open");
    const ok = await mw.wrapModelCall!(modelRequest([humanMessage("q")], runtime, good), async () => aiMessage("fine"));
    expect(contentText(ok.content)).toBe("fine");
  });

  it("max_concurrent_calls caps in-flight attempts process-wide", async () => {
    const mw = createLLMErrorHandlingMiddleware({ llm_call: { max_concurrent_calls: 1 } });
    let inFlight = 0;
    let peak = 0;
    const handler = async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return aiMessage("ok");
    };
    await Promise.all([1, 2, 3].map(() => mw.wrapModelCall!(modelRequest([humanMessage("q")]), handler)));
    expect(peak).toBe(1);
  });

  it("full agent run: a 429 with Retry-After is retried, the llm_retry event is streamed and the run succeeds", async () => {
    const model = new ScriptedModel([{ error: { kind: "rate_limit", status: 429, retryAfterMs: 2500 } }, "finally"]);
    const sleeps: number[] = [];
    const agent = createAgent({ model, middleware: [createLLMErrorHandlingMiddleware({ sleep: async (ms) => void sleeps.push(ms) })] });
    const stream = agent.stream({ messages: [humanMessage("hi")] }, { threadId: "llm-1", streamMode: ["custom", "values"] });
    const events: StreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const result = await stream.result;
    expect(result.status).toBe("success");
    expect(model.requests).toHaveLength(2);
    expect(sleeps).toEqual([2500]);
    expect(events.filter((e) => e.mode === "custom").map((e) => e.data)).toEqual([
      { type: "llm_retry", attempt: 1, max_attempts: 3, wait_ms: 2500, reason: "transient", message: "LLM request retry 1/3: provider request failed temporarily. Retrying in 3s." },
    ]);
    expect(contentText(result.state.messages.at(-1)!.content)).toBe("finally");
  });

  it("full agent run: a 500 burst exhausts retries and ends with the fallback message, not an exception", async () => {
    const e500 = { error: { kind: "server" as const, status: 500 } };
    const model = new ScriptedModel([e500, e500, e500]);
    const agent = createAgent({ model, middleware: [createLLMErrorHandlingMiddleware({ sleep: async () => {} })] });
    const result = await agent.invoke({ messages: [humanMessage("hi")] }, { threadId: "llm-2" });
    expect(result.status).toBe("error"); // DeerFlow: the fallback message is kept and the run ends as error, no exception
    expect(result.error).toMatchObject({ code: "llm_error" });
    expect(model.requests).toHaveLength(3);
    const last = result.state.messages.at(-1) as AIMessage;
    expect(last.additional_kwargs).toMatchObject({ deerflow_error_fallback: true, error_reason: "transient", error_type: "ModelCallError" });
  });
});
