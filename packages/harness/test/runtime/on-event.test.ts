import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createAgent } from "../../src/runtime";
import type { StreamEvent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { humanMessage } from "../../src/messages";

const echo = tool({
  name: "echo",
  description: "Echo text back",
  schema: z.object({ text: z.string() }),
  execute: ({ text }, rt) => {
    rt.writer({ type: "progress", text });
    return `echo: ${text}`;
  },
});

const script = () => new ScriptedModel([{ text: "Calling.", toolCalls: [{ name: "echo", args: { text: "hi" }, id: "c1" }] }, "done"]);

describe("RunOptions.onEvent (synchronous event delivery)", () => {
  it("delivers the same events, in the same order, as the async iterator", async () => {
    const modes = ["values", "updates", "messages", "custom"] as const;
    const viaIterator: StreamEvent[] = [];
    const a = createAgent({ model: script(), tools: [echo] });
    const s1 = a.stream({ messages: [humanMessage("go")] }, { threadId: "t", runId: "r", streamMode: [...modes] });
    for await (const e of s1) viaIterator.push(e);
    await s1.result;

    const viaCallback: StreamEvent[] = [];
    const b = createAgent({ model: script(), tools: [echo] });
    const s2 = b.stream({ messages: [humanMessage("go")] }, { threadId: "t", runId: "r", streamMode: [...modes], onEvent: (e) => viaCallback.push(e) });
    const leftover: StreamEvent[] = [];
    for await (const e of s2) leftover.push(e);
    const result = await s2.result;

    expect(result.status).toBe("success");
    expect(leftover).toEqual([]);
    const shape = (evs: StreamEvent[]) => evs.map((e) => e.mode);
    expect(shape(viaCallback)).toEqual(shape(viaIterator));
    expect(viaCallback.filter((e) => e.mode === "custom").map((e) => e.data)).toEqual([{ type: "progress", text: "hi" }]);
  });

  it("a throwing callback is logged and the run still succeeds", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const agent = createAgent({ model: script(), tools: [echo] });
    const result = await agent.stream({ messages: [humanMessage("go")] }, {
      onEvent: () => {
        throw new Error("subscriber broke");
      },
    }).result;
    expect(result.status).toBe("success");
    expect(result.state.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(warn.mock.calls.some((c) => String(c[0]).includes("subscriber broke"))).toBe(true);
    warn.mockRestore();
  });
});

describe("RunResult start info", () => {
  it("reports the checkpoint and state the run started from", async () => {
    const agent = createAgent({ model: new ScriptedModel(["one", "two"]) });
    const first = await agent.invoke({ messages: [humanMessage("a")] }, { threadId: "t2" });
    expect(first.startCheckpointId).toBeNull();
    expect(first.startState).toBeUndefined();
    const second = await agent.invoke({ messages: [humanMessage("b")] }, { threadId: "t2" });
    expect(second.startCheckpointId).toBe(first.checkpointId);
    expect(second.startState?.messages.map((m) => m.content)).toEqual(["a", "one"]);
    // unchanged messages are the very same objects in the final state (identity marks what a run added)
    expect(second.state.messages[0]).toBe(second.startState?.messages[0]);
  });

  it("omits the start checkpoint when the run was cancelled before loading its thread", async () => {
    const agent = createAgent({ model: new ScriptedModel(["never"]) });
    const ac = new AbortController();
    ac.abort();
    const r = await agent.invoke({ messages: [humanMessage("a")] }, { threadId: "t3", signal: ac.signal });
    expect(r.status).toBe("cancelled");
    expect(r.startCheckpointId).toBeUndefined();
  });
});

describe("values events and durability", () => {
  it("a state read issued when a step's `values` event arrives sees that step or a later one (pending writes are committed first)", async () => {
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const { SqliteCheckpointStore } = await import("../../src/checkpoints");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "values-durable-"));
    const store = new SqliteCheckpointStore(path.join(dir, "c.db"));
    try {
      const agent = createAgent({ model: script(), tools: [echo], checkpointer: store });
      const reads: Array<Promise<number>> = [];
      const seen: number[] = [];
      const result = await agent.stream({ messages: [humanMessage("go")] }, {
        threadId: "vd",
        streamMode: ["values"],
        onEvent: (e) => {
          const n = (e.data as { messages: unknown[] }).messages.length;
          seen.push(n);
          reads.push(agent.getState("vd").then((s) => s?.values.messages.length ?? 0));
        },
      }).result;
      expect(result.status).toBe("success");
      expect(seen).toEqual([1, 2, 3, 4]);
      // Each read sees at least the step its event announced (it may complete after later steps committed).
      const got = await Promise.all(reads);
      got.forEach((n, i) => expect(n).toBeGreaterThanOrEqual(seen[i]));
      // and what it reads is durable: a fresh reader of the file sees the final state
      const again = new SqliteCheckpointStore(path.join(dir, "c.db"));
      expect((await createAgent({ model: script(), checkpointer: again }).getState("vd"))?.values.messages).toHaveLength(4);
      await again.close();
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("values after every committed step", () => {
  it("a beforeModel hook that answers and jumps to end still gets its state streamed as values", async () => {
    const { aiMessage } = await import("../../src/messages");
    const model = new ScriptedModel([]);
    const agent = createAgent({
      model,
      middleware: [{ name: "Canned", beforeModel: () => ({ messages: [aiMessage("canned answer")], jumpTo: "end" as const }) }],
    });
    const values: number[] = [];
    const result = await agent.stream({ messages: [humanMessage("hi")] }, { threadId: "bm", streamMode: ["values"], onEvent: (e) => values.push((e.data as { messages: unknown[] }).messages.length) }).result;
    expect(result.status).toBe("success");
    expect(model.callCount).toBe(0);
    expect(values).toEqual([1, 2]);
  });
});
