/**
 * LangGraph API conformance through the official JS SDK (`@langchain/langgraph-sdk`): each call answers as
 * LangGraph's API does, or is refused with a clear 4xx where we do not support it — never accepted and ignored.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function sdk(steps: Parameters<typeof startTestGateway>[0] = {}): Promise<Client> {
  gw = await startTestGateway(steps);
  return new Client({ apiUrl: `${gw.url}/api/langgraph` });
}

/** The HTTP status an SDK call failed with. */
async function statusOf(call: Promise<unknown>): Promise<number | undefined> {
  const err = (await call.then(() => undefined, (e: unknown) => e)) as { status?: number } | undefined;
  return err?.status;
}

describe("LangGraph API through @langchain/langgraph-sdk", () => {
  it("runs.join waits for the run and returns its final values as JSON", async () => {
    const client = await sdk({ steps: [{ text: "slow answer", delayMs: 150 }] });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "lead_agent", { input: humanInput("hi") });
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(values.messages[1].content).toBe("slow answer");
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    // joining a finished run answers at once, the same values
    expect(await client.runs.join(thread.thread_id, run.run_id)).toEqual(values);
    // a client asking for an event stream still gets the run's stream
    const sse = await fetch(`${gw!.url}/api/langgraph/threads/${thread.thread_id}/runs/${run.run_id}/join`, { headers: { accept: "text/event-stream" } });
    expect(sse.headers.get("content-type")).toContain("text/event-stream");
    expect(await sse.text()).toContain("event: end");
  });

  it("runs.wait accepts raise_error; a failed run answers __error__, which the SDK raises", async () => {
    const client = await sdk({ steps: ["fine", { error: { kind: "auth", message: "bad key" } }] });
    const thread = await client.threads.create();
    const ok = (await client.runs.wait(thread.thread_id, "lead_agent", { input: humanInput("one") })) as { messages: unknown[] };
    expect(ok.messages).toHaveLength(2);
    // the Python SDK sends raise_error in the body: accepted
    const body = await postJson(`${gw!.url}/api/langgraph/threads/${thread.thread_id}/runs/wait`, { assistant_id: "lead_agent", input: humanInput("two"), raise_error: false });
    expect(body.status).toBe(200);
    const failed = (await body.json()) as { status: string; __error__: { error: string; message: string } };
    expect(failed.status).toBe("error");
    expect(failed.__error__).toEqual({ error: "RunError", message: expect.stringContaining("bad key") });
    const bad = await postJson(`${gw!.url}/api/langgraph/threads/${thread.thread_id}/runs/wait`, { assistant_id: "lead_agent", input: humanInput("x"), raise_error: "yes" });
    expect(bad.status).toBe(422);
  });

  it("interrupt_before / interrupt_after naming a node are refused with 422, never accepted and ignored", async () => {
    const client = await sdk({ steps: ["fine"] });
    const thread = await client.threads.create();
    expect(await statusOf(client.runs.create(thread.thread_id, "lead_agent", { input: humanInput("x"), interruptBefore: ["tools"] }))).toBe(422);
    expect(await statusOf(client.runs.create(thread.thread_id, "lead_agent", { input: humanInput("x"), interruptAfter: "*" }))).toBe(422);
    // nothing asked for (an empty list) is the same as not sending the field
    const ok = (await client.runs.wait(thread.thread_id, "lead_agent", { input: humanInput("one"), interruptBefore: [] })) as { messages: unknown[] };
    expect(ok.messages).toHaveLength(2);
  });

  it("runs.wait raises through the SDK unless raiseError is false", async () => {
    const client = await sdk({ steps: [{ error: { kind: "auth", message: "bad key" } }, { error: { kind: "auth", message: "still bad" } }] });
    const thread = await client.threads.create();
    await expect(client.runs.wait(thread.thread_id, "lead_agent", { input: humanInput("one") })).rejects.toThrow(/RunError: .*bad key/);
    const quiet = (await client.runs.wait(thread.thread_id, "lead_agent", { input: humanInput("two"), raiseError: false })) as Record<string, unknown>;
    expect(quiet.__error__).toMatchObject({ error: "RunError" });
  });

  it("runs.list honours limit, offset, status and select", async () => {
    const client = await sdk({ steps: ["a", { error: { kind: "auth", message: "no" } }, "c"] });
    const thread = await client.threads.create();
    const ids: string[] = [];
    for (const text of ["1", "2", "3"]) {
      const run = await client.runs.create(thread.thread_id, "lead_agent", { input: humanInput(text) });
      await client.runs.join(thread.thread_id, run.run_id);
      ids.push(run.run_id);
    }
    const newestFirst = [...ids].reverse();
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual(newestFirst);
    expect((await client.runs.list(thread.thread_id, { limit: 2 })).map((r) => r.run_id)).toEqual(newestFirst.slice(0, 2));
    expect((await client.runs.list(thread.thread_id, { limit: 2, offset: 2 })).map((r) => r.run_id)).toEqual(newestFirst.slice(2));
    expect((await client.runs.list(thread.thread_id, { status: "error" })).map((r) => r.run_id)).toEqual([ids[1]]);
    const selected = await client.runs.list(thread.thread_id, { select: ["run_id", "status"] });
    expect(selected[0]).toEqual({ run_id: ids[2], status: "success" });
    // without the SDK's defaults every run is listed, as DeerFlow answers
    const all = (await (await fetch(`${gw!.url}/api/langgraph/threads/${thread.thread_id}/runs`)).json()) as unknown[];
    expect(all).toHaveLength(3);
    expect(await statusOf(client.runs.list(thread.thread_id, { status: "finished" as never }))).toBe(422);
    expect(await statusOf(client.runs.list(thread.thread_id, { select: ["nope" as never] }))).toBe(422);
  });

  it("threads.search honours ids, select and sort; refuses a values filter", async () => {
    const client = await sdk();
    const a = await client.threads.create({ metadata: { k: "x" } });
    const b = await client.threads.create({ metadata: { k: "x" } });
    const c = await client.threads.create({ metadata: { k: "y" } });
    const byIds = await client.threads.search({ ids: [a.thread_id, c.thread_id] });
    expect(byIds.map((t) => t.thread_id).sort()).toEqual([a.thread_id, c.thread_id].sort());
    expect((await client.threads.search({ ids: [a.thread_id, c.thread_id], metadata: { k: "x" } })).map((t) => t.thread_id)).toEqual([a.thread_id]);
    const selected = await client.threads.search({ ids: [b.thread_id], select: ["thread_id", "metadata"] });
    expect(selected).toEqual([{ thread_id: b.thread_id, metadata: { k: "x" } }]);
    const asc = await client.threads.search({ sortBy: "created_at", sortOrder: "asc" });
    expect(asc.map((t) => t.thread_id)).toEqual([a.thread_id, b.thread_id, c.thread_id]);
    const page = await client.threads.search({ sortBy: "created_at", sortOrder: "asc", limit: 1, offset: 1 });
    expect(page.map((t) => t.thread_id)).toEqual([b.thread_id]);
    expect(await statusOf(client.threads.search({ select: ["config" as never] }))).toBe(422);
    expect(await statusOf(client.threads.search({ values: { title: "x" } }))).toBe(422);
  });

  it("threads.create if_exists: raise answers 409, do_nothing the existing thread", async () => {
    const client = await sdk();
    const t = await client.threads.create({ metadata: { v: 1 } });
    expect(await statusOf(client.threads.create({ threadId: t.thread_id, ifExists: "raise" }))).toBe(409);
    const again = await client.threads.create({ threadId: t.thread_id, ifExists: "do_nothing", metadata: { v: 2 } });
    expect(again.thread_id).toBe(t.thread_id);
    expect(again.metadata).toEqual({ v: 1 });
    expect(await statusOf(client.threads.create({ ifExists: "replace" as never }))).toBe(422);
  });
});
