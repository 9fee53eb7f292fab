import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { humanInput, startTestGateway, until } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("real @langchain/langgraph-sdk Client against the gateway", () => {
  it("threads.create, runs.stream with every mode, getHistory, getState, search", async () => {
    gw = await startTestGateway({
      steps: [{ text: "Echoing.", toolCalls: [{ name: "echo", args: { text: "sdk" }, id: "call_e" }] }, "Final answer."],
    });
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    const thread = await client.threads.create({ metadata: { origin: "sdk" } });
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(thread.status).toBe("idle");
    let createdRun: { run_id: string; thread_id?: string } | undefined;
    const seen: Record<string, unknown[]> = {};
    for await (const part of client.runs.stream(thread.thread_id, "lead_agent", {
      input: humanInput("hello sdk"),
      streamMode: ["values", "messages-tuple", "updates", "custom", "debug", "tasks", "checkpoints"],
      onDisconnect: "continue",
      config: { recursion_limit: 1000 },
      context: { mode: "flash" },
      onRunCreated: (meta) => {
        createdRun = meta;
      },
    })) {
      (seen[part.event] ??= []).push(part.data);
    }
    expect(createdRun?.thread_id).toBe(thread.thread_id);
    expect(createdRun?.run_id).toBeTruthy();
    expect(seen.metadata).toEqual([{ run_id: createdRun!.run_id, thread_id: thread.thread_id }]);
    for (const name of ["values", "messages", "updates", "custom", "checkpoints"]) expect(seen[name]?.length, name).toBeGreaterThan(0);
    expect(seen.custom).toContainEqual({ type: "echo_progress", text: "sdk" });
    const tuple = seen.messages![0] as [Record<string, unknown>, Record<string, unknown>];
    expect(tuple[1]).toBeTypeOf("object");
    const lastValues = seen.values!.at(-1) as { messages: Array<{ type: string; content: unknown }> };
    expect(lastValues.messages.at(-1)).toMatchObject({ type: "ai", content: "Final answer." });

    const history = await client.threads.getHistory(thread.thread_id, { limit: 1 });
    expect(history).toHaveLength(1);
    const h0 = history[0] as unknown as { values: { messages: Array<Record<string, unknown>> }; checkpoint_id: string };
    expect(h0.checkpoint_id).toBeTruthy();
    const msgs = h0.values.messages;
    expect(msgs.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(msgs[1].run_id).toBe(createdRun!.run_id);
    expect(msgs[2].run_id).toBe(createdRun!.run_id);
    expect((msgs[3].additional_kwargs as Record<string, unknown>).turn_duration).toBeTypeOf("number");
    const more = await client.threads.getHistory(thread.thread_id, { limit: 5 });
    expect(more.length).toBeGreaterThan(1);
    expect((more[1] as unknown as { values: Record<string, unknown> }).values.messages).toBeUndefined();

    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: unknown[] }).messages).toHaveLength(4);

    const found = await client.threads.search({ metadata: { origin: "sdk" }, limit: 10 });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    const run = await client.runs.get(thread.thread_id, createdRun!.run_id);
    expect(run.status).toBe("success");
    const list = await client.runs.list(thread.thread_id);
    expect(list.map((r) => r.run_id)).toEqual([createdRun!.run_id]);
  });

  it("joinStream replays a running run and cancel interrupts it", async () => {
    gw = await startTestGateway({ steps: ["first", { text: "slow", delayMs: 4000 }] });
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "lead_agent", { input: humanInput("one") });
    const run = await client.runs.create(thread.thread_id, "lead_agent", { input: humanInput("two"), streamMode: ["values"] });
    await until(async () => gw!.model.callCount === 2);
    const events: string[] = [];
    const joined = (async () => {
      for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) events.push(part.event);
    })();
    await until(() => events.includes("values"));
    await client.runs.cancel(thread.thread_id, run.run_id, false, "interrupt");
    await joined;
    expect(events[0]).toBe("metadata");
    expect(events).toContain("values");
    const rec = await client.runs.get(thread.thread_id, run.run_id);
    expect(rec.status).toBe("interrupted");
  });

  it("stateless runs.stream(null) auto-creates a thread", async () => {
    gw = await startTestGateway({ steps: ["stateless ok"] });
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    let created: { run_id: string; thread_id?: string } | undefined;
    const events: string[] = [];
    for await (const part of client.runs.stream(null, "lead_agent", { input: humanInput("hi"), onRunCreated: (m) => (created = m) })) {
      events.push(part.event);
    }
    expect(events[0]).toBe("metadata");
    expect(created?.thread_id).toBeTruthy();
    const t = await client.threads.get(created!.thread_id!);
    expect((t.values as { messages: unknown[] }).messages).toHaveLength(2);
  });
});
