import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;

describe("threads endpoints", () => {
  it("create with client id, get, patch (pin keeps updated_at), search order, delete removes files", async () => {
    gw = await startTestGateway({ steps: ["answer one"] });
    const base = `${gw.url}/api/langgraph`;
    const a = await json(postJson(`${base}/threads`, { thread_id: "thread-a", metadata: { user_id: "evil", k: "v" }, if_exists: "do_nothing" }));
    expect(a).toMatchObject({ thread_id: "thread-a", status: "idle", metadata: { k: "v" }, values: {}, interrupts: {} });
    expect((a.metadata as Record<string, unknown>).user_id).toBeUndefined();
    expect((await postJson(`${base}/threads`, { thread_id: "bad id" })).status).toBe(422);
    await new Promise((r) => setTimeout(r, 5));
    await json(postJson(`${base}/threads`, { thread_id: "thread-b" }));
    await new Promise((r) => setTimeout(r, 5));
    await json(postJson(`${base}/threads`, { thread_id: "thread-c" }));
    let order = (await json<Array<{ thread_id: string }>>(postJson(`${base}/threads/search`, { limit: 50, offset: 0, sort_by: "updated_at", select: ["thread_id"] }))).map((t) => t.thread_id);
    expect(order).toEqual(["thread-c", "thread-b", "thread-a"]);
    const before = await json(fetch(`${base}/threads/thread-a`));
    const pinned = await json(fetch(`${base}/threads/thread-a`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { deerflow_pinned: true } }) }));
    expect(pinned.updated_at).toBe(before.updated_at);
    expect(pinned.metadata).toEqual({ k: "v", deerflow_pinned: true });
    order = (await json<Array<{ thread_id: string }>>(postJson(`${base}/threads/search`, {}))).map((t) => t.thread_id);
    expect(order).toEqual(["thread-a", "thread-c", "thread-b"]);
    expect((await json<unknown[]>(postJson(`${base}/threads/search`, { limit: 1, offset: 1 }))).length).toBe(1);
    expect((await json<unknown[]>(postJson(`${base}/threads/search`, { metadata: { k: "v" } }))).length).toBe(1);
    expect((await postJson(`${base}/threads/search`, { metadata: { "bad key!": 1 } })).status).toBe(400);
    expect((await postJson(`${base}/threads/search`, { limit: 0 })).status).toBe(422);
    expect((await fetch(`${base}/threads/nope`)).status).toBe(404);
    expect((await fetch(`${base}/threads/nope`, { method: "PATCH", body: "{}" })).status).toBe(404);

    // a run, then title rename via state POST updates the sidebar title
    await json(postJson(`${gw.url}/api/threads/thread-b/runs/wait`, { input: humanInput("q") }));
    const full = await json<{ values: { messages: unknown[] }; status: string }>(fetch(`${base}/threads/thread-b`));
    expect(full.values.messages).toHaveLength(2);
    expect(full.status).toBe("idle");
    const st = await json<{ values: { title: string }; checkpoint_id: string; checkpoint: Record<string, unknown> }>(
      postJson(`${base}/threads/thread-b/state`, { values: { title: "Renamed" } }),
    );
    expect(st.values.title).toBe("Renamed");
    expect(st.checkpoint.checkpoint_id).toBe(st.checkpoint_id);
    const found = await json<Array<{ thread_id: string; values: Record<string, unknown> }>>(postJson(`${base}/threads/search`, {}));
    expect(found.find((t) => t.thread_id === "thread-b")!.values).toEqual({ title: "Renamed" });
    expect((await postJson(`${base}/threads/thread-b/state`, { values: { no_such_channel: 1 } })).status).toBe(422);
    expect((await postJson(`${base}/threads/thread-b/state`, { values: {}, checkpoint_id: "missing" })).status).toBe(404);
    const hist = await json<Array<Record<string, unknown>>>(postJson(`${base}/threads/thread-b/history`, { limit: 10 }));
    expect(hist[0].checkpoint_id).toBe(st.checkpoint_id);
    expect(hist[0]).not.toHaveProperty("checkpoint");
    expect((hist[0].values as Record<string, unknown>).title).toBe("Renamed");
    const older = await json<Array<Record<string, unknown>>>(postJson(`${base}/threads/thread-b/history`, { limit: 2, before: st.checkpoint_id }));
    expect(older[0].checkpoint_id).toBe(hist[1].checkpoint_id);
    expect(older).toHaveLength(2);

    // thread files are removed on delete; second delete is 404
    const dir = path.join(gw.dataDir, "users", "default", "threads", "thread-b", "user-data", "outputs");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "x.txt"), "x");
    const del = await fetch(`${base}/threads/thread-b`, { method: "DELETE" });
    expect(await del.json()).toEqual({ success: true, message: "Thread thread-b deleted" });
    expect(fs.existsSync(path.join(gw.dataDir, "users", "default", "threads", "thread-b"))).toBe(false);
    expect((await fetch(`${base}/threads/thread-b`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${base}/threads/thread-b`)).status).toBe(404);
    expect((await fetch(`${base}/threads/thread-b/state`)).status).toBe(404);
  });

  it("messages/page returns the transcript with thread-global seq across runs", async () => {
    gw = await startTestGateway({ steps: [{ text: "t1", toolCalls: [{ name: "echo", args: { text: "a" }, id: "c1" }] }, "a1", "a2"] });
    const tid = "page-thread";
    await postJson(`${gw.url}/api/threads`, { thread_id: tid });
    await json(postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q1") }));
    await json(postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q2") }));
    const page = await json<{ data: Array<Record<string, unknown>>; has_more: boolean; next_before_seq: number | null }>(
      fetch(`${gw.url}/api/threads/${tid}/messages/page`),
    );
    expect(page.has_more).toBe(false);
    expect(page.next_before_seq).toBeNull();
    const seqs = page.data.map((r) => r.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(page.data.map((r) => r.event_type)).toEqual([
      "llm.human.input", "llm.ai.response", "llm.tool.result", "llm.ai.response", "llm.human.input", "llm.ai.response",
    ]);
    const runIds = [...new Set(page.data.map((r) => r.run_id))];
    expect(runIds).toHaveLength(2);
    const lastAiRun1 = page.data[3].content as { additional_kwargs: Record<string, unknown> };
    expect(lastAiRun1.additional_kwargs.turn_duration).toBeTypeOf("number");
    const p2 = await json<{ data: Array<Record<string, unknown>>; has_more: boolean; next_before_seq: number | null }>(
      fetch(`${gw.url}/api/threads/${tid}/messages/page?limit=2`),
    );
    expect(p2.data.map((r) => r.seq)).toEqual(seqs.slice(-2));
    expect(p2.has_more).toBe(true);
    expect(p2.next_before_seq).toBe(seqs[seqs.length - 2]);
    const p3 = await json<{ data: Array<Record<string, unknown>> }>(fetch(`${gw.url}/api/threads/${tid}/messages/page?limit=2&before_seq=${p2.next_before_seq}`));
    expect(p3.data.map((r) => r.seq)).toEqual(seqs.slice(-4, -2));
    expect((await fetch(`${gw.url}/api/threads/${tid}/messages/page?after_seq=1`)).status).toBe(422);
    expect((await fetch(`${gw.url}/api/threads/${tid}/messages/page?limit=500`)).status).toBe(422);
    const usage = await json(fetch(`${gw.url}/api/threads/${tid}/token-usage`));
    expect(usage.total_runs).toBe(2);
    expect(usage.total_tokens as number).toBeGreaterThan(0);
  });
});
