import { afterEach, describe, expect, it } from "vitest";
import { createAgent, threadStateSchema } from "@deerflow-ts/harness";
import type { Agent } from "@deerflow-ts/harness";
import { humanInput, postJson, startTestGateway, until } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function newThread(base: string): Promise<string> {
  const res = await postJson(`${base}/api/threads`, { metadata: {} });
  return ((await res.json()) as { thread_id: string }).thread_id;
}

/** Make the next run record fail to store ("disk full"), after `afterMs` if given. */
/**
 * Make the first run record's create fail. With `after`, the failure waits
 * for that promise (an event of the run, never a timer), so the run has
 * provably done work before its record is lost.
 */
function failFirstRunRecord(gateway: TestGateway, after?: Promise<unknown>): void {
  const stores = gateway.gateway.stores;
  const create = stores.runs.create.bind(stores.runs);
  let failNext = true;
  stores.runs.create = async (rec) => {
    if (!failNext) return create(rec);
    failNext = false;
    if (after) await after;
    throw new Error("disk full");
  };
}

/** Resolves once the gateway's checkpoint store has stored a checkpoint written by the model node. */
function modelCheckpointStored(gateway: TestGateway): Promise<void> {
  const store = gateway.checkpointer;
  const put = store.put.bind(store);
  return new Promise((resolve) => {
    store.put = async (record, fence) => {
      await put(record, fence);
      if (record.metadata.writer === "model") resolve();
    };
  });
}

async function runStatus(base: string, tid: string, runId: string): Promise<string> {
  return ((await (await fetch(`${base}/api/threads/${tid}/runs/${runId}`)).json()) as { status: string }).status;
}

describe("RunManager", () => {
  it("lets exactly one of two simultaneous runs on a thread start (reject → 409 for the other)", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow", delayMs: 400 }], modelOptions: { onExhausted: "repeat-last" } });
    const tid = await newThread(gw.url);
    const [a, b] = await Promise.all([
      postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("a") }),
      postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("b") }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const ok = (await (a.status === 200 ? a : b).json()) as { run_id: string; status: string };
    expect(ok.status).toBe("running");
    await until(async () => (await runStatus(gw!.url, tid, ok.run_id)) === "success");
    expect(gw.model.callCount).toBe(1);
  });

  it("a streaming run whose record cannot be stored ends its stream with an error and frees the thread", async () => {
    gw = await startTestGateway({ steps: ["answer"] });
    failFirstRunRecord(gw);
    const tid = await newThread(gw.url);
    const res = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("q"), stream_mode: ["values"] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: error\ndata: {"message":"Could not store the run","name":"StoreError"}');
    expect(text.endsWith("event: end\ndata: null\n\n")).toBe(true);
    // nothing of the run stays on the thread (it had no state before)
    expect((await fetch(`${gw.url}/api/threads/${tid}/state`)).status).toBe(404);
    // the thread is not left reserved: the next run goes through
    const again = await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q2") });
    expect(again.status).toBe(200);
    const values = (await again.json()) as { messages: Array<{ content: unknown }> };
    expect(values.messages.map((m) => m.content)).toEqual([[{ type: "text", text: "q2" }], "answer"]);
  });

  it("a run that executed before its record failed to store is stopped and rolled back", async () => {
    // The run starts without waiting for its record's commit: here the store fails only after the run has
    // called the model and committed checkpoints.
    gw = await startTestGateway({ steps: [{ text: "answer", delayMs: 10 }, "second"] });
    failFirstRunRecord(gw, modelCheckpointStored(gw));
    const tid = await newThread(gw.url);
    const res = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("q"), stream_mode: ["values"] });
    const text = await res.text();
    expect(gw.model.callCount).toBe(1);
    expect(text).toContain('"content":"answer"'); // it ran…
    expect(text).toContain('event: error\ndata: {"message":"Could not store the run","name":"StoreError"}'); // …then failed
    expect(text.endsWith("event: end\ndata: null\n\n")).toBe(true);
    // its checkpoints were committed, then rolled back: the thread has no state, as before the run
    expect((await fetch(`${gw.url}/api/threads/${tid}/state`)).status).toBe(404);
    const runs = (await (await fetch(`${gw.url}/api/threads/${tid}/runs`)).json()) as unknown[];
    expect(runs).toEqual([]);
    const thread = (await (await fetch(`${gw.url}/api/threads/${tid}`)).json()) as { status: string };
    expect(thread.status).not.toBe("running");
  });

  it("a queued run whose record cannot be stored is dropped without disturbing the runs around it", async () => {
    gw = await startTestGateway({ steps: [{ text: "first", delayMs: 200 }, "third"] });
    const stores = gw.gateway.stores;
    const create = stores.runs.create.bind(stores.runs);
    let calls = 0;
    stores.runs.create = async (rec) => {
      calls++;
      if (calls === 2) throw new Error("disk full");
      return create(rec);
    };
    const tid = await newThread(gw.url);
    const first = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("1") })).json()) as { run_id: string };
    const second = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("2"), multitask_strategy: "enqueue" });
    const third = postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("3"), multitask_strategy: "enqueue" });
    expect(await second.text()).toContain("event: error");
    const values = (await (await third).json()) as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.filter((m) => m.type === "ai").map((m) => m.content)).toEqual(["first", "third"]);
    expect(await runStatus(gw.url, tid, first.run_id)).toBe("success");
  });

  it("stores the transcript incrementally: a run writes only the messages it added", async () => {
    gw = await startTestGateway({ steps: ["first answer", "second answer"] });
    const recorded: Array<{ runId: string; ids: string[] }> = [];
    const record = gw.gateway.stores.messages.record.bind(gw.gateway.stores.messages);
    gw.gateway.stores.messages.record = async (threadId, runId, messages, createdAt) => {
      recorded.push({ runId, ids: messages.map((m) => String(m.id)) });
      return record(threadId, runId, messages, createdAt);
    };
    const tid = await newThread(gw.url);
    await (await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q1") })).json();
    await (await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q2") })).json();
    expect(recorded).toHaveLength(2);
    expect(recorded[0].ids).toHaveLength(2);
    expect(recorded[1].ids).toHaveLength(2);
    expect(recorded[1].ids.some((id) => recorded[0].ids.includes(id))).toBe(false);
    const page = (await (await fetch(`${gw.url}/api/threads/${tid}/messages/page?limit=10`)).json()) as {
      data: Array<{ run_id: string }>;
    };
    expect(page.data).toHaveLength(4);
  });

  it("a rollback that lands before the run loaded its thread keeps the thread's history", async () => {
    let slow = false;
    let agent: Agent | undefined;
    gw = await startTestGateway({
      steps: ["first answer", "never used"],
      agentFactory: async () => {
        if (slow) await new Promise((r) => setTimeout(r, 300));
        agent ??= createAgent({ model: gw!.model, checkpointer: gw!.checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
        return agent;
      },
    });
    const tid = await newThread(gw.url);
    await (await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q1") })).json();
    slow = true;
    // Other settings: the runtime builds (slowly) a new agent instead of reusing the cached one.
    const r2 = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("q2"), context: { is_plan_mode: true } })).json()) as { run_id: string };
    const c = await fetch(`${gw.url}/api/threads/${tid}/runs/${r2.run_id}/cancel?wait=1&action=rollback`, { method: "POST" });
    expect(c.status).toBe(204);
    const state = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as { values: { messages: unknown[] } };
    expect(state.values.messages).toHaveLength(2);
    expect(await runStatus(gw.url, tid, r2.run_id)).toBe("error");
    expect(gw.model.callCount).toBe(1);
  });
});
