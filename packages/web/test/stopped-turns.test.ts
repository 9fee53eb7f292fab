import { describe, expect, it } from "vitest";
import type { WireRun } from "@deerflow-ts/harness/wire";
import { groupMessages } from "../src/stream/groups";
import { stoppedRunIds, stoppedTurnIds } from "../src/stream/stopped-runs";
import type { WireMessage } from "../src/stream/types";

let clock = 0;
const run = (run_id: string, status: WireRun["status"], kwargs: Record<string, unknown> = {}): WireRun =>
  ({ run_id, status, kwargs, created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString() }) as WireRun;
const human = (id: string, text: string): WireMessage => ({ type: "human", id, content: text }) as WireMessage;
const ai = (id: string, text: string): WireMessage => ({ type: "ai", id, content: text }) as WireMessage;

describe("stopped turns from the run records", () => {
  it("maps interrupted runs to the human message each one answered", () => {
    const stopped = stoppedRunIds([run("r1", "success"), run("r2", "interrupted"), run("r3", "error")]);
    expect([...stopped]).toEqual(["r2"]);
    const rows = [
      { run_id: "r1", event_type: "llm.human.input", content: { id: "h1" } },
      { run_id: "r1", event_type: "llm.ai.response", content: { id: "a1" } },
      { run_id: "r2", event_type: "llm.human.input", content: { id: "h2" } },
      { run_id: "r3", event_type: "llm.human.input", content: { id: "h3" } },
    ];
    expect(stoppedTurnIds(stopped, rows)).toEqual(["h2"]);
  });

  it("leaves out runs that paused for a human answer rather than being stopped", () => {
    const paused = run("p1", "interrupted");
    const resumed = run("p2", "success", { command: { resume: "yes" } });
    const cancelled = run("c1", "interrupted");
    const waiting = run("w1", "interrupted");
    // newest first, as the gateway lists them
    expect([...stoppedRunIds([waiting, cancelled, resumed, paused], true)]).toEqual(["c1"]);
    expect([...stoppedRunIds([waiting, cancelled, resumed, paused], false)]).toEqual(["c1", "w1"]);
  });

  it("marks the stopped turn's answer, and stands in for an answer that never reached the state", () => {
    const messages = [human("h1", "one"), ai("a1", "first"), human("h2", "two"), human("h3", "three"), ai("a3", "third")];
    const items = groupMessages({ messages, timings: {}, stoppedTurns: ["h2", "h3"] });
    expect(items.map((i) => [i.kind, i.kind === "assistant" ? !!i.stopped : null])).toEqual([
      ["human", null],
      ["assistant", false],
      ["human", null],
      ["assistant", true],
      ["human", null],
      ["assistant", true],
    ]);
    const standIn = items[3];
    expect(standIn.kind === "assistant" && standIn.parts).toEqual([]);
    // Without run records saying so, nothing is marked.
    expect(groupMessages({ messages, timings: {} }).some((i) => i.kind === "assistant" && i.stopped)).toBe(false);
  });
});
