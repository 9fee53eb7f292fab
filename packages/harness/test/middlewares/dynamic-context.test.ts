import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { createDynamicContextMiddleware, formatReminderDate, lastInjectedDate } from "../../src/middlewares/dynamic-context";
import { apply, leadRuntime, leadState } from "./_fixtures-lead";

const day1 = () => new Date(2026, 4, 8, 23, 59); // Friday
const day2 = () => new Date(2026, 4, 9, 0, 1); // Saturday

describe("DynamicContextMiddleware", () => {
  it("formats dates like %Y-%m-%d, %A", () => {
    expect(formatReminderDate(day1())).toBe("2026-05-08, Friday");
  });

  it("first turn: ID-swap into reminder SystemMessage (same id) + {id}__user", async () => {
    const mw = createDynamicContextMiddleware({ now: day1 });
    const st = leadState([humanMessage("hello", { id: "m1", additional_kwargs: { files: [] } })]);
    const out = apply(st, await mw.beforeAgent!(st, leadRuntime()));
    expect(out.messages).toHaveLength(2);
    expect(out.messages[0]).toMatchObject({
      type: "system",
      id: "m1",
      content: "<system-reminder>\n<current_date>2026-05-08, Friday</current_date>\n</system-reminder>",
      additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true, reminder_date: "2026-05-08, Friday" },
    });
    expect(out.messages[1]).toMatchObject({ type: "human", id: "m1__user", content: "hello", additional_kwargs: { files: [] } });
    expect(await mw.beforeAgent!(out, leadRuntime())).toBeUndefined();
    const next = leadState([...out.messages, aiMessage("hi"), humanMessage("again", { id: "m2" })]);
    expect(await mw.beforeAgent!(next, leadRuntime())).toBeUndefined();
  });

  it("injects memory as a hidden role:user message from the provider", async () => {
    const calls: unknown[] = [];
    const mw = createDynamicContextMiddleware({ now: day1, memoryProvider: async (u, a) => (calls.push([u, a]), "User likes tea") });
    const st = leadState([humanMessage("hello", { id: "m1" })]);
    const out = apply(st, await mw.beforeAgent!(st, leadRuntime({ context: { agent_name: "writer" } })));
    expect(calls).toEqual([["u1", "writer"]]);
    expect(out.messages.map((m) => [m.type, m.id])).toEqual([["system", "m1"], ["human", "m1__memory"], ["human", "m1__user"]]);
    expect(out.messages[1]).toMatchObject({ content: "<memory>\nUser likes tea\n</memory>", additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true } });
    expect(out.messages[1].additional_kwargs.reminder_date).toBeUndefined();
  });

  it("a memory provider slower than the timeout skips injection for this turn", async () => {
    const mw = createDynamicContextMiddleware({ now: day1, memory_timeout_ms: 20, memoryProvider: () => new Promise((r) => setTimeout(() => r("late"), 200)) });
    expect(await mw.beforeAgent!(leadState([humanMessage("x", { id: "m" })]), leadRuntime())).toBeUndefined();
    const failing = createDynamicContextMiddleware({ now: day1, memoryProvider: async () => { throw new Error("db down"); } });
    const res = (await failing.beforeAgent!(leadState([humanMessage("x", { id: "m" })]), leadRuntime())) as any;
    expect(res.messages.map((m: any) => m.id)).toEqual(["m", "m__user"]);
  });

  it("after midnight injects a date update before the current turn", async () => {
    let now = day1;
    const mw = createDynamicContextMiddleware({ now: () => now() });
    let st = leadState([humanMessage("one", { id: "a" })]);
    st = apply(st, await mw.beforeAgent!(st, leadRuntime()));
    st = leadState([...st.messages, aiMessage("ok"), humanMessage("two", { id: "b" })]);
    now = day2;
    st = apply(st, await mw.beforeAgent!(st, leadRuntime()));
    expect(st.messages.map((m) => m.id?.replace(/^lc_run--.*/, "ai"))).toEqual(["a", "a__user", "ai", "b", "b__user"]);
    expect(st.messages[3].content).toContain("<current_date>2026-05-09, Saturday</current_date>");
    expect(lastInjectedDate(st.messages)).toBe("2026-05-09, Saturday");
    expect(await mw.beforeAgent!(st, leadRuntime())).toBeUndefined();
  });

  it("full run: the model sees the reminder before the user turn; the prefix stays frozen on turn 2", async () => {
    const model = new ScriptedModel(["a1", "a2"]);
    const agent = createAgent({ model, middleware: [createDynamicContextMiddleware({ now: day1 })], systemPrompt: "SYS" });
    await agent.invoke({ messages: [humanMessage("first", { id: "u1" })] }, { threadId: "dc1" });
    await agent.invoke({ messages: [humanMessage("second", { id: "u2" })] }, { threadId: "dc1" });
    const [r1, r2] = model.requests;
    expect(r1.messages.map((m) => m.type)).toEqual(["system", "system", "human"]);
    expect(r1.messages[1].content).toContain("<current_date>2026-05-08, Friday</current_date>");
    expect(r2.messages.slice(0, 3)).toEqual(r1.messages);
    expect(r2.messages.map((m) => m.content).slice(3)).toEqual(["a1", "second"]);
  });
});
