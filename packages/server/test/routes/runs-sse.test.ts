import { afterEach, describe, expect, it } from "vitest";
import { humanInput, parseSse, postJson, startTestGateway, until } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const CONTENT_LOCATION = /(\/threads\/(?<thread_id>.+))?\/runs\/(?<run_id>.+)/;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function newThread(base: string, prefix = "/api/langgraph"): Promise<string> {
  const res = await postJson(`${base}${prefix}/threads`, { metadata: {} });
  expect(res.status).toBe(200);
  return ((await res.json()) as { thread_id: string }).thread_id;
}

describe("POST /threads/{id}/runs/stream — SSE bytes and headers", () => {
  it("streams metadata first, every requested mode, ids {ms}-{seq}, and end last", async () => {
    gw = await startTestGateway({
      steps: [{ text: "Let me echo.", toolCalls: [{ name: "echo", args: { text: "hi" }, id: "call_1" }] }, "All done here."],
    });
    const tid = await newThread(gw.url);
    const res = await postJson(`${gw.url}/api/langgraph/threads/${tid}/runs/stream`, {
      assistant_id: "lead_agent",
      input: humanInput("hello"),
      stream_mode: ["values", "messages-tuple", "updates", "custom"],
      on_disconnect: "continue",
      config: { recursion_limit: 1000 },
      context: { thread_id: tid, mode: "pro", ignored_key: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const loc = res.headers.get("content-location")!;
    const m = CONTENT_LOCATION.exec(loc)!;
    expect(m.groups!.thread_id).toBe(tid);
    expect(loc).toMatch(new RegExp(`^/api/threads/${tid}/runs/[0-9a-f-]{36}$`));
    const raw = await res.text();
    const frames = parseSse(raw);
    expect(frames[0].event).toBe("metadata");
    expect(JSON.parse(frames[0].data!)).toEqual({ run_id: m.groups!.run_id, thread_id: tid });
    // exact framing order: event, data, id
    expect(raw.startsWith(`event: metadata\ndata: {"run_id":"${m.groups!.run_id}","thread_id":"${tid}"}\nid: `)).toBe(true);
    const last = frames[frames.length - 1];
    expect(last).toEqual({ event: "end", data: "null" });
    expect(raw.endsWith("event: end\ndata: null\n\n")).toBe(true);
    const data = frames.slice(0, -1);
    data.forEach((f, i) => expect(f.id).toMatch(new RegExp(`^\\d{13}-${i}$`)));
    const names = new Set(data.map((f) => f.event));
    for (const n of ["values", "messages", "updates", "custom"]) expect(names).toContain(n);
    const tuple = JSON.parse(data.find((f) => f.event === "messages")!.data!);
    expect(Array.isArray(tuple) && tuple.length === 2).toBe(true);
    expect(tuple[0].id).toBeTruthy();
    const custom = JSON.parse(data.find((f) => f.event === "custom")!.data!);
    expect(custom).toEqual({ type: "echo_progress", text: "hi" });
    const finalValues = JSON.parse(data.filter((f) => f.event === "values").pop()!.data!);
    expect(finalValues.messages.map((x: { type: string }) => x.type)).toEqual(["human", "ai", "tool", "ai"]);
    // context whitelist reached the model call path; run record is success with usage
    const runRes = await fetch(`${gw.url}/api/threads/${tid}/runs/${m.groups!.run_id}`);
    const run = (await runRes.json()) as Record<string, unknown>;
    expect(run.status).toBe("success");
    expect(run.llm_call_count).toBe(2);
    expect(run.total_tokens as number).toBeGreaterThan(0);
    expect(run.message_count).toBe(4);
  });

  it("only sends the modes asked for (default values)", async () => {
    gw = await startTestGateway({ steps: ["hi there"] });
    const tid = await newThread(gw.url, "/api");
    const res = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x") });
    const frames = parseSse(await res.text());
    expect([...new Set(frames.map((f) => f.event))]).toEqual(["metadata", "values", "end"]);
  });

  it("rejects bad input with 4xx detail, never 500", async () => {
    gw = await startTestGateway({ steps: ["x"] });
    const tid = await newThread(gw.url);
    const base = `${gw.url}/api/langgraph/threads/${tid}/runs/stream`;
    const cases: Array<[unknown, number]> = [
      [{ input: humanInput("a"), stream_mode: ["messages"] }, 422],
      [{ input: humanInput("a"), stream_mode: ["events"] }, 422],
      [{ input: humanInput("a"), stream_mode: "bogus" }, 422],
      [{ input: humanInput("a"), durability: "sync" }, 422],
      [{ input: humanInput("a"), stream_resumable: true }, 422],
      [{ input: humanInput("a"), webhook: "http://x" }, 422],
      [{ input: { messages: [{ type: "alien", content: "x" }] } }, 400],
      [{ input: humanInput("a"), checkpoint_id: "nope" }, 404],
    ];
    for (const [body, status] of cases) {
      const r = await postJson(base, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      const j = (await r.json()) as { detail: unknown };
      expect(j.detail).toBeTruthy();
      expect(JSON.stringify(j)).not.toMatch(/at .*\.ts:\d+/);
    }
    const bad = await fetch(base, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toHaveProperty("detail");
    expect((await postJson(`${gw.url}/api/threads/missing-thread/runs/stream`, { input: humanInput("a") })).status).toBe(404);
    expect((await postJson(`${gw.url}/api/threads/bad%20id!/runs/stream`, { input: humanInput("a") })).status).toBe(422);
    const unknown = await postJson(`${gw.url}/api/threads/missing-thread/runs/stream`, { input: humanInput("a") });
    expect(await unknown.json()).toEqual({ detail: "Thread missing-thread not found" });
  });

  it("rejects an oversized body with 413", async () => {
    gw = await startTestGateway({ steps: ["x"], maxBodyBytes: 1024 });
    const tid = await newThread(gw.url);
    const r = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x".repeat(5000)) });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/too large/);
  });

  it("emits an error event then end when the run fails", async () => {
    gw = await startTestGateway({ steps: [{ error: { kind: "server", message: "provider exploded" } }] });
    const tid = await newThread(gw.url);
    const res = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x"), stream_mode: ["values"] });
    const frames = parseSse(await res.text());
    const err = frames.find((f) => f.event === "error")!;
    expect(JSON.parse(err.data!)).toEqual({ message: "provider exploded", name: "ModelCallError" });
    expect(frames[frames.length - 1].event).toBe("end");
    const runId = JSON.parse(frames[0].data!).run_id;
    const run = (await (await fetch(`${gw.url}/api/threads/${tid}/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(run.status).toBe("error");
    const thread = (await (await fetch(`${gw.url}/api/threads/${tid}`)).json()) as Record<string, unknown>;
    expect(thread.status).toBe("error");
  });

  it("sends `: heartbeat` comments while idle", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow", delayMs: 400 }], heartbeatMs: 100 });
    const tid = await newThread(gw.url);
    const raw = await (await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x") })).text();
    expect(raw).toContain(": heartbeat\n\n");
    expect(raw.endsWith("event: end\ndata: null\n\n")).toBe(true);
  });
});

describe("run lifecycle: multitask, cancel, join, disconnect", () => {
  it("rejects a second run with 409 and cancels with 202 → interrupted; then 409 not cancellable", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow", delayMs: 3000 }, "second"] });
    const tid = await newThread(gw.url);
    const bg = await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("x") });
    expect(bg.status).toBe(200);
    const run = (await bg.json()) as { run_id: string; status: string };
    expect(["pending", "running"]).toContain(run.status);
    const dup = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("y") });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toEqual({ detail: `Thread ${tid} already has an active run` });
    const del = await fetch(`${gw.url}/api/threads/${tid}`, { method: "DELETE" });
    expect(del.status).toBe(409);
    const c1 = await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}/cancel?wait=0&action=interrupt`, { method: "POST" });
    expect(c1.status).toBe(202);
    await until(async () => ((await (await fetch(`${gw!.url}/api/threads/${tid}/runs/${run.run_id}`)).json()) as { status: string }).status === "interrupted");
    const c2 = await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}/cancel`, { method: "POST" });
    expect(c2.status).toBe(409);
    expect(await c2.json()).toEqual({ detail: `Run ${run.run_id} is not cancellable (status: interrupted)` });
    const c404 = await fetch(`${gw.url}/api/threads/${tid}/runs/00000000-0000-0000-0000-000000000000/cancel`, { method: "POST" });
    expect(c404.status).toBe(404);
  });

  it("cancel with wait=1 returns 204 after the run stopped", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow", delayMs: 3000 }] });
    const tid = await newThread(gw.url);
    const run = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("x") })).json()) as { run_id: string };
    const c = await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}/cancel?wait=1`, { method: "POST" });
    expect(c.status).toBe(204);
    const rec = (await (await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}`)).json()) as { status: string };
    expect(rec.status).toBe("interrupted");
  });

  it("enqueue runs FIFO per thread", async () => {
    gw = await startTestGateway({ steps: [{ text: "first", delayMs: 300 }, "second", "third"] });
    const tid = await newThread(gw.url);
    const r1 = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("1") })).json()) as { run_id: string };
    const r2 = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("2"), multitask_strategy: "enqueue" })).json()) as { run_id: string; status: string };
    expect(r2.status).toBe("pending");
    const s3 = await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("3"), multitask_strategy: "enqueue" });
    expect(s3.status).toBe(200);
    const values = (await s3.json()) as { messages: Array<{ type: string; content: unknown }> };
    const ai = values.messages.filter((m) => m.type === "ai").map((m) => m.content);
    expect(ai).toEqual(["first", "second", "third"]);
    for (const id of [r1.run_id, r2.run_id]) {
      const rec = (await (await fetch(`${gw.url}/api/threads/${tid}/runs/${id}`)).json()) as { status: string };
      expect(rec.status).toBe("success");
    }
  });

  it("multitask interrupt stops the active run and starts the new one", async () => {
    gw = await startTestGateway({ steps: [{ text: "never", delayMs: 5000 }, "replacement"] });
    const tid = await newThread(gw.url);
    const r1 = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("1") })).json()) as { run_id: string };
    await until(async () => gw!.model.callCount === 1);
    const res = await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("2"), multitask_strategy: "interrupt" });
    const values = (await res.json()) as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.filter((m) => m.type === "ai").map((m) => m.content)).toEqual(["replacement"]);
    const rec = (await (await fetch(`${gw.url}/api/threads/${tid}/runs/${r1.run_id}`)).json()) as { status: string };
    expect(rec.status).toBe("interrupted");
  });

  it("rollback restores the pre-run checkpoint", async () => {
    gw = await startTestGateway({
      steps: ["first answer", { text: "thinking", toolCalls: [{ name: "sleep", args: { ms: 5000 }, id: "c1" }] }],
    });
    const tid = await newThread(gw.url);
    await (await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q1") })).json();
    const before = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as { values: { messages: unknown[] } };
    expect(before.values.messages).toHaveLength(2);
    const r2 = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("q2") })).json()) as { run_id: string };
    // wait until the run has written checkpoints past the human input (the AI tool-call message)
    await until(async () => {
      const s = (await (await fetch(`${gw!.url}/api/threads/${tid}/state`)).json()) as { values: { messages: unknown[] } };
      return s.values.messages.length >= 4;
    });
    const c = await fetch(`${gw.url}/api/threads/${tid}/runs/${r2.run_id}/cancel?wait=1&action=rollback`, { method: "POST" });
    expect(c.status).toBe(204);
    const after = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as { values: { messages: Array<{ content: unknown }> } };
    expect(after.values.messages).toHaveLength(2);
    const rec = (await (await fetch(`${gw.url}/api/threads/${tid}/runs/${r2.run_id}`)).json()) as { status: string; error: string };
    expect(rec.status).toBe("error");
    expect(rec.error).toBe("Rolled back by user");
  });

  it("join replays with Last-Event-ID -1, resumes after a retained id, and sends gap when evicted", async () => {
    // Two model steps around a tool call: more data events than the 4 the buffer retains.
    gw = await startTestGateway({
      steps: [{ text: "calling", toolCalls: [{ name: "echo", args: { text: "a" } }] }, { text: "one two three four five six seven eight" }],
      replayBufferSize: 4,
    });
    const tid = await newThread(gw.url);
    const full = parseSse(
      await (
        await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x"), stream_mode: ["messages-tuple", "values", "updates"] })
      ).text(),
    );
    const runId = JSON.parse(full[0].data!).run_id as string;
    const data = full.filter((f) => f.id);
    expect(data.length).toBeGreaterThan(6);
    const joinUrl = `${gw.url}/api/threads/${tid}/runs/${runId}/stream`;
    const replay = parseSse(await (await fetch(joinUrl, { headers: { "Last-Event-ID": "-1" } })).text());
    expect(replay.slice(0, -1).map((f) => f.id)).toEqual(data.slice(-4).map((f) => f.id));
    expect(replay[replay.length - 1].event).toBe("end");
    const resume = parseSse(await (await fetch(joinUrl, { headers: { "Last-Event-ID": data[data.length - 2].id! } })).text());
    expect(resume.map((f) => f.id ?? f.event)).toEqual([data[data.length - 1].id, "end"]);
    const gap = parseSse(await (await fetch(joinUrl, { headers: { "Last-Event-ID": data[0].id! } })).text());
    expect(gap).toHaveLength(1);
    expect(gap[0].event).toBe("gap");
    expect(gap[0].id).toBeUndefined();
    const g = JSON.parse(gap[0].data!);
    expect(g).toMatchObject({ code: "stream_replay_gap", run_id: runId, requested_event_id: data[0].id, recovery: "reload_durable_state" });
    expect(g.earliest_available_event_id).toBe(data[data.length - 4].id);
    expect(g.latest_available_event_id).toBe(data[data.length - 1].id);
  });

  it("joining a finished and reaped run yields only end", async () => {
    gw = await startTestGateway({ steps: ["done"], reapAfterMs: 50 });
    const tid = await newThread(gw.url);
    const frames = parseSse(await (await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput("x") })).text());
    const runId = JSON.parse(frames[0].data!).run_id as string;
    await new Promise((r) => setTimeout(r, 120));
    const res = await fetch(`${gw.url}/api/threads/${tid}/runs/${runId}/stream`);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await res.text()).toBe("event: end\ndata: null\n\n");
  });

  it("live join tails a running run", async () => {
    gw = await startTestGateway({ steps: [{ text: "late answer", delayMs: 300 }] });
    const tid = await newThread(gw.url);
    const run = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("x"), stream_mode: ["values"] })).json()) as { run_id: string };
    const frames = parseSse(await (await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}/stream`)).text());
    expect(frames[0].event).toBe("metadata");
    expect(frames[frames.length - 1].event).toBe("end");
    const last = JSON.parse(frames.filter((f) => f.event === "values").pop()!.data!);
    expect(last.messages[1].content).toBe("late answer");
  });

  it("on_disconnect=cancel interrupts the run; continue keeps it going", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow-a", delayMs: 600 }, { text: "slow-b", delayMs: 600 }] });
    for (const mode of ["cancel", "continue"] as const) {
      const tid = await newThread(gw.url);
      const ac = new AbortController();
      const res = await fetch(`${gw.url}/api/threads/${tid}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: humanInput("x"), on_disconnect: mode }),
        signal: ac.signal,
      });
      const runId = CONTENT_LOCATION.exec(res.headers.get("content-location")!)!.groups!.run_id;
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      const status = await until(async () => {
        const r = (await (await fetch(`${gw!.url}/api/threads/${tid}/runs/${runId}`)).json()) as { status: string };
        return r.status === "running" || r.status === "pending" ? undefined : r.status;
      });
      expect(status).toBe(mode === "cancel" ? "interrupted" : "success");
    }
  });

  it("a client gone before its stream started still cancels an on_disconnect=cancel run", async () => {
    // The SSE response starts on the event-loop turn after the request: a client that hangs up right after
    // sending must still be noticed (the case of a response already gone at that turn: sse-response.test.ts).
    gw = await startTestGateway({ steps: [{ text: "slow", delayMs: 800 }] });
    const tid = await newThread(gw.url);
    const { port } = new URL(gw.url);
    const body = JSON.stringify({ input: humanInput("x"), on_disconnect: "cancel" });
    const net = await import("node:net");
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), "127.0.0.1", () => {
        socket.end(
          `POST /api/threads/${tid}/runs/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.on("error", reject);
    });
    const status = await until(async () => {
      const runs = (await (await fetch(`${gw!.url}/api/threads/${tid}/runs`)).json()) as Array<{ status: string }>;
      const s = runs[0]?.status;
      return s === undefined || s === "running" || s === "pending" ? undefined : s;
    });
    expect(status).toBe("interrupted");
  });
});
