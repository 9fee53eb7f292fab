import { describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import type { AIMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import type { AgentMiddleware, StreamEvent } from "../../src/runtime";
import { composeModelCall, hookPlan } from "../../src/runtime/middleware-chain";
import { lastValue } from "../../src/state";
import { ScriptedModel } from "../../src/testing";

describe("hookPlan", () => {
  it("lists each loop hook's middlewares in execution order (after* hooks reversed) with their node names", () => {
    const mws: AgentMiddleware[] = [
      { name: "A", beforeModel: () => undefined, afterModel: () => undefined },
      { name: "B", beforeAgent: () => undefined, afterModel: () => undefined, afterAgent: () => undefined },
      { name: "C", beforeModel: () => undefined, afterModel: () => undefined },
    ];
    const plan = hookPlan(mws);
    const names = (hook: keyof typeof plan) => plan[hook].map((s) => [s.mw.name, s.node]);
    expect(names("beforeAgent")).toEqual([["B", "B.before_agent"]]);
    expect(names("beforeModel")).toEqual([["A", "A.before_model"], ["C", "C.before_model"]]);
    expect(names("afterModel")).toEqual([["C", "C.after_model"], ["B", "B.after_model"], ["A", "A.after_model"]]);
    expect(names("afterAgent")).toEqual([["B", "B.after_agent"]]);
  });
});

describe("the loop's hooks", () => {
  it("synchronous and asynchronous hooks run in order, their updates apply, and a hook returning nothing streams a null update", async () => {
    const order: string[] = [];
    const seen: unknown[] = [];
    const mws: AgentMiddleware[] = [
      {
        name: "Sync",
        stateSchema: { marks: lastValue<string[]>(() => []) },
        beforeModel: (state) => {
          order.push("Sync.before");
          return { marks: [...((state.marks as string[]) ?? []), "sync"] };
        },
        afterModel: () => {
          order.push("Sync.after");
        },
      },
      {
        name: "Async",
        beforeModel: async (state) => {
          order.push("Async.before");
          seen.push(state.marks); // sees the update the synchronous hook before it returned
          await new Promise((r) => setImmediate(r));
          return { marks: [...(state.marks as string[]), "async"] };
        },
        afterModel: async () => {
          order.push("Async.after");
          return undefined;
        },
      },
    ];
    const agent = createAgent({ model: new ScriptedModel(["done"]), middleware: mws });
    const events: StreamEvent[] = [];
    const run = agent.stream({ messages: [humanMessage("go")] }, { threadId: "hooks-1", streamMode: ["updates"] });
    for await (const e of run) events.push(e);
    const result = await run.result;
    expect(result.status).toBe("success");
    expect(order).toEqual(["Sync.before", "Async.before", "Async.after", "Sync.after"]);
    expect(seen).toEqual([["sync"]]);
    expect(result.state.marks).toEqual(["sync", "async"]);
    const nodes = events.map((e) => e.data as Record<string, unknown>);
    expect(nodes).toContainEqual({ "Sync.before_model": { marks: ["sync"] } });
    expect(nodes).toContainEqual({ "Async.before_model": { marks: ["sync", "async"] } });
    expect(nodes).toContainEqual({ "Async.after_model": null });
    expect(nodes).toContainEqual({ "Sync.after_model": null });
  });

  it("without the updates mode, a hook returning nothing streams nothing", async () => {
    const agent = createAgent({ model: new ScriptedModel(["done"]), middleware: [{ name: "Quiet", beforeModel: () => undefined }] });
    const events: StreamEvent[] = [];
    const run = agent.stream({ messages: [humanMessage("go")] }, { threadId: "hooks-2", streamMode: ["values"] });
    for await (const e of run) events.push(e);
    expect((await run.result).status).toBe("success");
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.mode === "values")).toBe(true);
  });
});

describe("composeModelCall", () => {
  it("makes the first middleware the outermost layer and calls each wrapper as a method of its middleware", async () => {
    const calls: string[] = [];
    class Tagging implements AgentMiddleware {
      constructor(readonly name: string) {}
      async wrapModelCall(req: Parameters<NonNullable<AgentMiddleware["wrapModelCall"]>>[0], handler: Parameters<NonNullable<AgentMiddleware["wrapModelCall"]>>[1]): Promise<AIMessage> {
        calls.push(`${this.name}:in`);
        const reply = await handler(req);
        calls.push(`${this.name}:out`);
        return reply;
      }
    }
    const inner = async (): Promise<AIMessage> => {
      calls.push("model");
      return { type: "ai", content: "x", tool_calls: [] } as unknown as AIMessage;
    };
    const handler = composeModelCall([new Tagging("outer"), { name: "plain" }, new Tagging("inner")], inner);
    await handler({} as never);
    expect(calls).toEqual(["outer:in", "inner:in", "model", "inner:out", "outer:out"]);
  });
});
