import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent } from "../../src/runtime";
import type { AgentMiddleware, StreamEvent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { Command, lastValue } from "../../src/state";
import { humanMessage, toolMessage } from "../../src/messages";
import type { AIMessage, ToolMessage } from "../../src/messages";
import { MemoryCheckpointStore, SqliteCheckpointStore } from "../../src/checkpoints";

const echo = tool({
  name: "echo",
  description: "Echo text back",
  schema: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("createAgent loop", () => {
  it("runs model → tool → model and stores the conversation", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, "done"]);
    const agent = createAgent({ model, tools: [echo], systemPrompt: "You are a test." });
    const r = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "t1" });
    expect(r.status).toBe("success");
    const types = r.state.messages.map((m) => m.type);
    expect(types).toEqual(["human", "ai", "tool", "ai"]);
    expect((r.state.messages[2] as ToolMessage).content).toBe("echo: hi");
    expect(model.requests[0].messages[0]).toMatchObject({ type: "system", content: "You are a test." });
    expect(model.requests[0].tools.map((t) => t.name)).toEqual(["echo"]);
    expect(model.requests[1].messages.map((m) => m.type)).toEqual(["system", "human", "ai", "tool"]);
    const snap = await agent.getState("t1");
    expect(snap?.values.messages).toHaveLength(4);
  });

  it("accepts wire dicts as input messages", async () => {
    const agent = createAgent({ model: new ScriptedModel(["ok"]) });
    const r = await agent.invoke({ messages: [{ type: "human", content: [{ type: "text", text: "hey" }] }] }, { threadId: "t2" });
    expect(r.state.messages[0].type).toBe("human");
    expect(r.state.messages[0].id).toBeTruthy();
  });

  it("turns invalid arguments, unknown tools and throwing tools into error tool messages", async () => {
    const boom = tool({ name: "boom", description: "fails", schema: z.object({}), execute: () => { throw new Error("kaput"); } });
    const model = new ScriptedModel([
      { toolCalls: [{ name: "echo", args: { text: 5 } }, { name: "nope", args: {} }, { name: "boom", args: {} }, { name: "echo", args: "{not json" }] },
      "recovered",
    ]);
    const agent = createAgent({ model, tools: [echo, boom] });
    const r = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t3" });
    expect(r.status).toBe("success");
    const tools = r.state.messages.filter((m) => m.type === "tool") as ToolMessage[];
    expect(tools).toHaveLength(4);
    expect(tools.every((t) => t.status === "error")).toBe(true);
    expect(tools[0].content).toMatch(/Invalid arguments for tool 'echo'.*text/);
    expect(tools[1].content).toMatch(/Tool 'nope' not found. Available tools: boom, echo/);
    expect(tools[2].content).toMatch(/kaput/);
    expect(tools[3].content).toMatch(/Invalid arguments for tool 'echo'/);
    expect(model.requests[1].messages.filter((m) => m.type === "tool")).toHaveLength(4);
  });

  it("orders hooks like LangChain: before in order, after reversed, first wrap outermost", async () => {
    const log: string[] = [];
    const mk = (n: string): AgentMiddleware => ({
      name: n,
      beforeAgent: () => void log.push(`${n}.beforeAgent`),
      beforeModel: () => void log.push(`${n}.beforeModel`),
      afterModel: () => void log.push(`${n}.afterModel`),
      afterAgent: () => void log.push(`${n}.afterAgent`),
      wrapModelCall: async (req, h) => {
        log.push(`${n}.wrapModel>`);
        const r = await h(req);
        log.push(`${n}.wrapModel<`);
        return r;
      },
      wrapToolCall: async (req, h) => {
        log.push(`${n}.wrapTool>`);
        const r = await h(req);
        log.push(`${n}.wrapTool<`);
        return r;
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "echo", args: { text: "a" } }] }, "end"]);
    const agent = createAgent({ model, tools: [echo], middleware: [mk("A"), mk("B")] });
    await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t4" });
    expect(log.slice(0, 10)).toEqual([
      "A.beforeAgent", "B.beforeAgent",
      "A.beforeModel", "B.beforeModel",
      "A.wrapModel>", "B.wrapModel>", "B.wrapModel<", "A.wrapModel<",
      "B.afterModel", "A.afterModel",
    ]);
    expect(log.slice(10, 14)).toEqual(["A.wrapTool>", "B.wrapTool>", "B.wrapTool<", "A.wrapTool<"]);
    expect(log.slice(-2)).toEqual(["B.afterAgent", "A.afterAgent"]);
  });

  it("supports state extension, partial updates and jumps", async () => {
    let jumped = 0;
    const mw: AgentMiddleware = {
      name: "Counter",
      stateSchema: { counter: { reducer: (a: number, b: number) => (a ?? 0) + b, default: () => 0 }, note: lastValue<string>() },
      beforeModel: () => ({ counter: 1 }),
      afterModel: (state) => {
        if (jumped === 0) {
          jumped++;
          return { note: "again", jumpTo: "model" };
        }
        return undefined;
      },
    };
    const model = new ScriptedModel(["first", "second"]);
    const agent = createAgent({ model, middleware: [mw] });
    const r = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t5" });
    expect(r.state.counter).toBe(2);
    expect(r.state.note).toBe("again");
    expect(model.callCount).toBe(2);
    const endEarly: AgentMiddleware = { name: "Stop", beforeModel: () => ({ jumpTo: "end" }) };
    const m2 = new ScriptedModel([]);
    const r2 = await createAgent({ model: m2, middleware: [endEarly] }).invoke({ messages: [humanMessage("x")] }, { threadId: "t5b" });
    expect(r2.status).toBe("success");
    expect(m2.callCount).toBe(0);
  });

  it("applies Command results from tools and honours goto end", async () => {
    const finish = tool({
      name: "finish",
      description: "ends",
      schema: z.object({}),
      execute: (_a, rt) => new Command({ update: { messages: [toolMessage("bye", { tool_call_id: rt.toolCallId, name: "finish" })], title: "T" }, goto: "end" }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "finish", args: {} }] }]);
    const agent = createAgent({ model, tools: [finish], stateSchema: { messages: (await import("../../src/state")).baseStateSchema.messages, title: lastValue<string>() } });
    const r = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t6" });
    expect(r.status).toBe("success");
    expect(r.state.title).toBe("T");
    expect(model.callCount).toBe(1);
    expect(r.state.messages.at(-1)).toMatchObject({ type: "tool", content: "bye" });
  });

  it("enforces the recursion limit", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "echo", args: { text: "a" } }] }], { onExhausted: "repeat-last" });
    const r = await createAgent({ model, tools: [echo] }).invoke({ messages: [humanMessage("x")] }, { threadId: "t7", recursionLimit: 5 });
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/Recursion limit of 5/);
  });

  it("interrupts and resumes with a value", async () => {
    const ask = tool({
      name: "ask",
      description: "asks a human",
      schema: z.object({ q: z.string() }),
      execute: ({ q }, rt) => `answer to ${q}: ${rt.interrupt<string>({ question: q })}`,
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "ask", args: { q: "color?" } }] }, "thanks"]);
    const store = new MemoryCheckpointStore();
    const agent = createAgent({ model, tools: [ask], checkpointer: store });
    const r1 = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t8" });
    expect(r1.status).toBe("interrupted");
    expect(r1.interrupts[0].value).toEqual({ question: "color?" });
    const snap = await agent.getState("t8");
    expect(snap?.next).toEqual(["tools"]);
    const r2 = await agent.invoke(new Command({ resume: "blue" }), { threadId: "t8" });
    expect(r2.status).toBe("success");
    expect(r2.state.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect((r2.state.messages[2] as ToolMessage).content).toBe("answer to color?: blue");
  });

  it("cancellation leaves the last committed step consistent", async () => {
    const slow = tool({
      name: "slow",
      description: "slow",
      schema: z.object({}),
      execute: (_a, rt) => new Promise<string>((res, rej) => {
        const t = setTimeout(() => res("late"), 5000);
        rt.signal.addEventListener("abort", () => { clearTimeout(t); rej(rt.signal.reason); });
      }),
    });
    const store = new SqliteCheckpointStore(":memory:");
    const model = new ScriptedModel([{ toolCalls: [{ name: "slow", args: {} }] }, "never"]);
    const agent = createAgent({ model, tools: [slow], checkpointer: store });
    const ac = new AbortController();
    const s = agent.stream({ messages: [humanMessage("x")] }, { threadId: "t9", signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await collect(s);
    const r = await s.result;
    expect(r.status).toBe("cancelled");
    const snap = await agent.getState("t9");
    expect(snap?.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    // The next run continues the thread (the dangling call is still visible to middlewares).
    const model2 = new ScriptedModel(["fine"]);
    const agent2 = createAgent({ model: model2, tools: [slow], checkpointer: store });
    const r2 = await agent2.invoke({ messages: [humanMessage("again")] }, { threadId: "t9" });
    expect(r2.status).toBe("success");
  });

  it("a finished run leaves nothing on its caller's abort signal, and the tools and middlewares see that same signal", async () => {
    // A server keeps a finished run's controller for re-joins: a listener left on its signal would keep the
    // whole execution (state, parts, events) reachable for as long.
    const seen: AbortSignal[] = [];
    const probe = tool({
      name: "probe",
      description: "records its signal",
      schema: z.object({}),
      timeoutMs: 5000, // a timeout links the call's signal to the run's
      execute: (_args, rt) => {
        seen.push(rt.signal);
        return "ok";
      },
    });
    const mw: AgentMiddleware = {
      name: "SignalProbe",
      beforeAgent: (_state, rt) => {
        seen.push(rt.signal);
        return undefined;
      },
    };
    const model = new ScriptedModel([{ toolCalls: [{ name: "probe", args: {} }] }, "done"], { latencyMs: 5 });
    const agent = createAgent({ model, tools: [probe], middleware: [mw] });
    const ac = new AbortController();
    const r = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "t-sig", signal: ac.signal });
    expect(r.status).toBe("success");
    expect(seen.length).toBe(2);
    expect(seen[0]).toBe(ac.signal); // the middleware's runtime signal is the caller's, not a copy
    expect(seen[1].aborted).toBe(false);
    expect(getEventListeners(ac.signal, "abort")).toEqual([]);
    const dependants = Object.getOwnPropertySymbols(ac.signal).find((s) => s.description === "kDependantSignals");
    expect(dependants ? ((ac.signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants]?.size ?? 0) : 0).toBe(0);
    // Aborting it now (a late cancel of a finished run) is harmless.
    ac.abort();
    model.assertComplete();
  });

  it("streams values, updates, messages-tuple token deltas (with tool-call chunks) and custom events", async () => {
    const shout = tool({
      name: "shout",
      description: "emits a custom event",
      schema: z.object({ text: z.string() }),
      execute: ({ text }, rt) => {
        rt.writer({ type: "progress", text });
        return text.toUpperCase();
      },
    });
    const model = new ScriptedModel([{ text: "Let me shout", toolCalls: [{ name: "shout", args: { text: "hey" } }] }, "All done now"]);
    const agent = createAgent({ model, tools: [shout] });
    const events = await collect(agent.stream({ messages: [humanMessage("x")] }, { threadId: "t10", streamMode: ["values", "updates", "messages", "custom"] }));
    const modes = new Set(events.map((e) => e.mode));
    expect(modes).toEqual(new Set(["values", "updates", "messages", "custom"]));
    const chunks = events.filter((e) => e.mode === "messages").map((e) => (e.data as [any, any])[0]);
    const text = chunks.filter((c) => c.type === "AIMessageChunk").map((c) => c.content).join("");
    expect(text).toBe("Let me shoutAll done now");
    expect(chunks.some((c) => c.tool_call_chunks?.some((t: any) => t.name === "shout"))).toBe(true);
    expect(chunks.some((c) => c.type === "tool" && c.content === "HEY")).toBe(true);
    const ids = new Set(chunks.filter((c) => c.type === "AIMessageChunk").map((c) => c.id));
    expect(ids.size).toBe(2);
    expect(events.find((e) => e.mode === "custom")?.data).toEqual({ type: "progress", text: "hey" });
    expect(events.some((e) => e.mode === "updates" && "model" in (e.data as object))).toBe(true);
    expect(events.at(-1)?.mode).toBe("values");
    const last = events.at(-1)!.data as { messages: AIMessage[] };
    expect(last.messages.at(-1)?.content).toBe("All done now");
  });

  it("forks from an older checkpoint and updates state as a new checkpoint", async () => {
    const store = new MemoryCheckpointStore();
    const model = new ScriptedModel(["one", "two", "three"]);
    const agent = createAgent({ model, checkpointer: store });
    await agent.invoke({ messages: [humanMessage("a")] }, { threadId: "t11" });
    const afterFirst = (await agent.getState("t11"))!;
    await agent.invoke({ messages: [humanMessage("b")] }, { threadId: "t11" });
    expect((await agent.getState("t11"))!.values.messages).toHaveLength(4);
    const forked = await agent.invoke({ messages: [humanMessage("c")] }, { threadId: "t11", checkpointId: afterFirst.checkpointId });
    expect(forked.state.messages.map((m) => m.content)).toEqual(["a", "one", "c", "three"]);
    const history = await agent.getStateHistory("t11", { limit: 3 });
    expect(history[0].values.messages).toHaveLength(4);
    expect(history[0].parentCheckpointId).toBe(history[1].checkpointId);
    const updated = await agent.updateState("t11", { messages: [humanMessage("note", { id: "n1" })] });
    expect(updated.metadata.source).toBe("update");
    expect(updated.values.messages.at(-1)?.id).toBe("n1");
  });
});

describe("run status", () => {
  it("a middleware can mark a completed run as failed through runtime.outcome.setError; afterRun always runs", async () => {
    const seen: string[] = [];
    const mw: AgentMiddleware = {
      name: "Marker",
      afterModel: (_s, rt) => {
        rt.outcome.setError({ type: "empty_terminal_response", reason: "no answer" });
        return undefined;
      },
      afterRun: (_s, _rt, status) => void seen.push(status),
    };
    const r = await createAgent({ model: new ScriptedModel([""]), middleware: [mw] }).invoke({ messages: [humanMessage("x")] }, { threadId: "st1" });
    expect(r.status).toBe("error");
    expect(r.error).toMatchObject({ code: "empty_terminal_response" });
    expect(seen).toEqual(["error"]);
    expect(r.outcome.error).toEqual({ type: "empty_terminal_response", reason: "no answer" });
  });
});

describe("tool timeouts", () => {
  it("a tool over its timeout is aborted and reported to the model as an error result; the run goes on", async () => {
    let aborted = false;
    const slow = tool({
      name: "slow",
      description: "never finishes on its own",
      schema: z.object({}),
      timeoutMs: 50,
      execute: (_a, rt) =>
        new Promise<string>(() => {
          rt.signal.addEventListener("abort", () => (aborted = true));
        }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "slow", args: {} }] }, "moving on"]);
    const t0 = Date.now();
    const r = await createAgent({ model, tools: [slow] }).invoke({ messages: [humanMessage("x")] }, { threadId: "to1" });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.status).toBe("success");
    const result = r.state.messages[2] as ToolMessage;
    expect(result).toMatchObject({ type: "tool", status: "error" });
    expect(result.content).toMatch(/timed out after 50 ms/);
    expect(aborted).toBe(true);
    expect(r.state.messages.at(-1)?.content).toBe("moving on");
  });
});
