import { describe, expect, it } from "vitest";
import { groupMessages, isHidden, splitReasoning } from "../src/stream/groups";
import type { WireMessage } from "../src/stream/types";

const view = (messages: WireMessage[], timings = {}) => ({ messages, timings });

describe("groupMessages", () => {
  it("groups an assistant turn with tool steps paired to results by tool_call_id", () => {
    const items = groupMessages(
      view(
        [
          { type: "human", id: "h1", content: [{ type: "text", text: "Write a report" }], additional_kwargs: { files: [{ filename: "a.csv", size: 3 }] } },
          {
            type: "ai",
            id: "a1",
            content: "Working on it.",
            tool_calls: [
              { id: "c1", name: "write_file", args: { path: "/mnt/user-data/outputs/r.md" } },
              { id: "c2", name: "bash", args: { command: "false" } },
            ],
          },
          // results arrive out of order
          { type: "tool", id: "t2", tool_call_id: "c2", name: "bash", content: "Error: exit code 1", status: "error" },
          { type: "tool", id: "t1", tool_call_id: "c1", name: "write_file", content: "OK" },
          { type: "ai", id: "a2", content: "Done." },
        ],
        { c1: { start: 100, end: 350 } },
      ),
    );
    expect(items.map((i) => i.kind)).toEqual(["human", "assistant"]);
    const human = items[0] as Extract<(typeof items)[0], { kind: "human" }>;
    expect(human.text).toBe("Write a report");
    expect(human.files[0].filename).toBe("a.csv");
    const turn = items[1] as Extract<(typeof items)[0], { kind: "assistant" }>;
    expect(turn.parts.map((p) => p.kind)).toEqual(["text", "tool", "tool", "text"]);
    const [, s1, s2] = turn.parts as Array<Extract<(typeof turn.parts)[0], { kind: "tool" }>>;
    expect(s1.step).toMatchObject({ name: "write_file", result: "OK", status: "success", durationMs: 250 });
    expect(s2.step).toMatchObject({ name: "bash", result: "Error: exit code 1", status: "error" });
  });

  it("marks unfinished steps running while streaming and incomplete afterwards", () => {
    const msgs: WireMessage[] = [{ type: "ai", id: "a", content: "", tool_calls: [{ id: "c", name: "web_search", args: { query: "x" } }] }];
    const streaming = groupMessages(view(msgs), true)[0] as { parts: Array<{ step?: { status: string } }> };
    expect(streaming.parts[0].step?.status).toBe("running");
    const after = groupMessages(view(msgs), false)[0] as { parts: Array<{ step?: { status: string } }> };
    expect(after.parts[0].step?.status).toBe("incomplete");
  });

  it("says what long-term memory injected for a user message (from the hidden memory message's report)", () => {
    const items = groupMessages({
      timings: {},
      messages: [
        { type: "human", id: "u1__memory", content: "<memory>…</memory>", additional_kwargs: { hide_from_ui: true, memory_recall: { facts: [{ content: "Prefers metric units", relevant: true }] } } },
        { type: "human", id: "u1", content: "How far is it?" },
        { type: "ai", id: "a1", content: "About 5 km." },
      ],
    } as never);
    expect(items[0]).toMatchObject({ kind: "human", id: "u1", remembered: ["Prefers metric units"] });
    expect(items).toHaveLength(2);
  });

  it("hides hide_from_ui messages, hidden names and system messages", () => {
    const items = groupMessages(
      view([
        { type: "system", id: "s", content: "sys" },
        { type: "human", id: "m", content: "<memory>", additional_kwargs: { hide_from_ui: true } },
        { type: "human", id: "sum", content: "summary", name: "summary" },
        { type: "human", id: "lw", content: "warn", name: "loop_warning" },
        { type: "human", id: "tr", content: "todo", name: "todo_reminder" },
        { type: "human", id: "h", content: "visible" },
      ]),
    );
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: "human", text: "visible" });
    expect(isHidden({ type: "ai", id: "x", content: "", name: "todo_completion_reminder" })).toBe(true);
  });

  it("renders ask_clarification as a card and marks it answered by a later (hidden) human answer", () => {
    const ask: WireMessage[] = [
      { type: "human", id: "h", content: "Plan a trip" },
      { type: "ai", id: "a", content: "", tool_calls: [{ id: "c", name: "ask_clarification", args: { question: "Where?" } }] },
      {
        type: "tool",
        id: "req-1",
        tool_call_id: "c",
        name: "ask_clarification",
        content: "Where?\n1. Paris\n2. Rome",
        artifact: {
          human_input: {
            version: 1,
            kind: "human_input_request",
            source: "ask_clarification",
            request_id: "req-1",
            question: "Where do you want to go?",
            input_mode: "choice_with_other",
            options: [
              { id: "option-1", label: "Paris", value: "Paris" },
              { id: "option-2", label: "Rome", value: "Rome" },
            ],
          },
        },
      },
    ];
    const open = groupMessages(view(ask));
    expect(open.map((i) => i.kind)).toEqual(["human", "assistant", "clarification"]);
    const card = open[2] as Extract<(typeof open)[0], { kind: "clarification" }>;
    expect(card.request).toMatchObject({ requestId: "req-1", question: "Where do you want to go?", inputMode: "choice_with_other" });
    expect(card.request.options.map((o) => o.label)).toEqual(["Paris", "Rome"]);
    expect(card.answered).toBe(false);
    // the assistant turn holds no visible step for ask_clarification
    expect((open[1] as { parts: unknown[] }).parts).toHaveLength(0);

    const answered = groupMessages(
      view([...ask, { type: "human", id: "ans", content: "Paris", additional_kwargs: { hide_from_ui: true, human_input_response: { request_id: "req-1" } } }]),
    );
    expect(answered.filter((i) => i.kind === "human")).toHaveLength(1);
    expect((answered[2] as { answered: boolean }).answered).toBe(true);
  });

  it("flags deerflow_error_fallback answers", () => {
    const items = groupMessages(view([{ type: "ai", id: "e", content: "The model is unavailable.", additional_kwargs: { deerflow_error_fallback: true } }]));
    expect((items[0] as { parts: Array<{ errorFallback?: boolean }> }).parts[0].errorFallback).toBe(true);
  });

  it("shows an orphan tool result (no matching call) as its own step", () => {
    const items = groupMessages(view([{ type: "tool", id: "t", tool_call_id: "zzz", name: "bash", content: "x" }]));
    expect(items[0]).toMatchObject({ kind: "assistant" });
    expect((items[0] as { parts: Array<{ step: { name: string } }> }).parts[0].step.name).toBe("bash");
  });
});

describe("splitReasoning", () => {
  it("reads reasoning from reasoning_content, thinking blocks and inline <think>", () => {
    expect(splitReasoning({ type: "ai", content: "Hi", additional_kwargs: { reasoning_content: "hmm" } })).toEqual({ reasoning: "hmm", text: "Hi" });
    expect(
      splitReasoning({ type: "ai", content: [{ type: "thinking", thinking: "deep" }, { type: "text", text: "Answer" }] }),
    ).toEqual({ reasoning: "deep", text: "Answer" });
    expect(splitReasoning({ type: "ai", content: "<think>inner</think>Out" })).toEqual({ reasoning: "inner", text: "Out" });
    expect(splitReasoning({ type: "ai", content: "<think>still thinking" })).toEqual({ reasoning: "still thinking", text: "" });
  });
});
