/**
 * Red team: another user's run across processes. Alice's run executes on P1;
 * Bob, signed in on P2, holds her thread id and run id (leaked, guessed or
 * read off a shared screen) and tries every way a run can be reached: stream,
 * join, `Last-Event-ID` reconnect, cancel, cancel-and-stream, wait, a new run
 * on her thread with each multitask strategy, her ids under his own thread,
 * the stateless routes, and listings. Each must answer as if the run did not
 * exist, and Alice's run must go on untouched.
 */
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addUser, initializeAdmin } from "../../helpers/auth-session";
import type { SignedIn } from "../../helpers/auth-session";
import { humanInput } from "../helpers/runs-api";
import { openSse } from "../helpers/sse-client";
import type { SseStream } from "../helpers/sse-client";
import { authHeaders, on, startDeployment } from "./deployment";
import type { Deployment } from "./deployment";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

describe.skipIf(!PG || !REDIS)("red team: another user's run across processes", { timeout: 60_000 }, () => {
  let d: Deployment;
  let alice: SignedIn;
  let bob: SignedIn;
  let aliceThread: string;
  let aliceRun: string;
  let aliceStream: SseStream;
  let bobThread: string;

  beforeAll(async () => {
    d = await startDeployment({ processes: 2 });
    const [p1, p2] = d.procs;
    const admin = await initializeAdmin(p1!.api);
    alice = await addUser(admin, "alice@example.com");
    bob = on(await addUser(on(admin, p2!), "bob@example.com"), p2!);
    aliceThread = (await alice.json<{ thread_id: string }>("POST", "/threads", {})).thread_id;
    bobThread = (await bob.json<{ thread_id: string }>("POST", "/threads", {})).thread_id;
    // Alice's run waits in its model call on P1 for as long as the attacks take
    aliceStream = await openSse(`${p1!.api}/threads/${aliceThread}/runs/stream`, {
      body: { input: humanInput("[hang] alice's secret plan"), stream_mode: ["values", "messages-tuple"] },
      headers: authHeaders(alice, "POST"),
    });
    const meta = await aliceStream.waitFor((f) => f.event === "metadata");
    aliceRun = (meta.data as { run_id: string }).run_id;
    await aliceStream.waitFor((f) => f.event === "values");
    for (let i = 0; i < 400 && !d.llm.requests.some((r) => JSON.stringify(r.body).includes("secret plan")); i++) await new Promise((r) => setTimeout(r, 10));
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") console.error(d?.output().slice(-6000));
  });

  afterAll(async () => {
    aliceStream?.abort();
    await d?.stop();
  });

  /** Bob's request to P2; its status and body text. */
  async function asBob(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const res = await bob.send(method, path, body, headers);
    return { status: res.status, text: await res.text() };
  }

  async function aliceRunStatus(): Promise<string> {
    return (await on(alice, d.procs[1]!).json<{ status: string }>("GET", `/threads/${aliceThread}/runs/${aliceRun}`)).status;
  }

  it("stream, join and Last-Event-ID reconnect of Alice's run through P2 are 404 for Bob, under her thread and under his", async () => {
    const lastId = aliceStream.frames.filter((f) => f.id).at(-1)!.id!;
    for (const thread of [aliceThread, bobThread]) {
      for (const tail of ["stream", "join"]) {
        for (const lei of [undefined, lastId, "0-0", "*"]) {
          const r = await asBob("GET", `/threads/${thread}/runs/${aliceRun}/${tail}`, undefined, lei ? { "last-event-id": lei } : {});
          expect(r.status, `${thread === aliceThread ? "her" : "his"} thread /${tail} ${lei ?? ""}`).toBe(404);
          expect(r.text).not.toContain("secret plan");
        }
      }
      const rec = await asBob("GET", `/threads/${thread}/runs/${aliceRun}`);
      expect(rec.status).toBe(404);
    }
    // the same through a real SSE reader: no frame of hers arrives
    const s = await openSse(`${d.procs[1]!.api}/threads/${bobThread}/runs/${aliceRun}/stream`, { headers: authHeaders(bob), lastEventId: lastId });
    expect(s.status).toBe(404);
    expect((await s.done).map((f) => f.event)).toEqual([]);
  });

  it("cancel, cancel-and-stream and cancel_on_disconnect of Alice's run from P2 are refused and her run keeps running", async () => {
    for (const thread of [aliceThread, bobThread]) {
      for (const q of ["", "?action=rollback", "?wait=1", "?action=interrupt&wait=true"]) {
        expect((await asBob("POST", `/threads/${thread}/runs/${aliceRun}/cancel${q}`)).status).toBe(404);
        expect((await asBob("POST", `/threads/${thread}/runs/${aliceRun}/stream${q}`)).status).toBe(404);
      }
      // a join that would cancel the run when its client goes away, then goes away
      const s = await openSse(`${d.procs[1]!.api}/threads/${thread}/runs/${aliceRun}/stream?cancel_on_disconnect=true`, { headers: authHeaders(bob) });
      expect(s.status).toBe(404);
      s.abort();
    }
    expect(await aliceRunStatus()).toBe("running");
    // nothing reached her stream on P1 either (no error, no end)
    expect(aliceStream.frames.map((f) => f.event)).not.toContain("end");
    expect(aliceStream.frames.map((f) => f.event)).not.toContain("error");
  });

  it("a new run on Alice's thread from P2, with every multitask strategy and through the stateless routes, is refused", async () => {
    const body = (strategy: string) => ({ input: humanInput("bob was here"), multitask_strategy: strategy });
    for (const strategy of ["reject", "interrupt", "rollback", "enqueue"]) {
      for (const route of ["runs", "runs/wait", "runs/stream"]) {
        const r = await asBob("POST", `/threads/${aliceThread}/${route}`, body(strategy));
        expect(r.status, `${route} ${strategy}`).toBe(404);
      }
      for (const route of ["/runs", "/runs/wait", "/runs/stream"]) {
        const r = await asBob("POST", route, { ...body(strategy), config: { configurable: { thread_id: aliceThread } } });
        expect(r.status, `${route} ${strategy}`).toBe(404);
      }
    }
    // claiming her thread id as a new thread of his
    expect((await asBob("POST", "/threads", { thread_id: aliceThread })).status).toBe(409);
    expect(await aliceRunStatus()).toBe("running");
    expect(d.llm.requests.some((r) => JSON.stringify(r.body).includes("bob was here"))).toBe(false);
  });

  it("listings on P2 show Bob nothing of Alice's: no thread, no run", async () => {
    const threads = await bob.json<Array<{ thread_id: string }>>("POST", "/threads/search", {});
    expect(threads.map((t) => t.thread_id)).toEqual([bobThread]);
    expect((await asBob("GET", `/threads/${aliceThread}/runs`)).status).toBe(404);
    const own = await bob.json<Array<{ run_id: string }>>("GET", `/threads/${bobThread}/runs`);
    expect(own.map((r) => r.run_id)).not.toContain(aliceRun);
    // signed out, P2 answers nothing at all
    const anon = await fetch(`${d.procs[1]!.api}/threads/${aliceThread}/runs/${aliceRun}/stream`);
    expect(anon.status).toBe(401);
    await anon.arrayBuffer();
  });

  let queued: string;
  it("a forged thread_released on Redis for Alice's busy thread does not start her queued run early", async () => {
    const a2 = on(alice, d.procs[1]!);
    queued = (await a2.json<{ run_id: string; status: string }>("POST", `/threads/${aliceThread}/runs`, { input: humanInput("queued behind the plan"), multitask_strategy: "enqueue" })).run_id;
    const redis = new Redis(REDIS!);
    try {
      // whoever can reach Redis can say the thread is free; the thread lock in PostgreSQL still says it is not
      for (const origin of ["forged", "another-process"]) {
        await redis.publish("deerflow:run_signals", JSON.stringify({ origin, signal: { type: "thread_released", threadId: aliceThread } }));
      }
    } finally {
      await redis.quit();
    }
    // every process re-checks the lock on a wake-up: the queued run stays pending behind the running one
    for (let i = 0; i < 20; i++) {
      expect((await a2.json<{ status: string }>("GET", `/threads/${aliceThread}/runs/${queued}`)).status).toBe("pending");
    }
    expect(await aliceRunStatus()).toBe("running");
    expect(d.llm.requests.some((r) => JSON.stringify(r.body).includes("queued behind the plan"))).toBe(false);
  });

  it("Alice herself joins from P2 and cancels from P2: the run on P1 ends interrupted", async () => {
    const a2 = on(alice, d.procs[1]!);
    const joined = await openSse(`${d.procs[1]!.api}/threads/${aliceThread}/runs/${aliceRun}/stream`, { headers: authHeaders(alice) });
    expect(joined.status).toBe(200);
    await joined.waitFor((f) => f.event === "values");
    expect((await a2.send("POST", `/threads/${aliceThread}/runs/${aliceRun}/cancel`)).status).toBe(202);
    await aliceStream.waitFor((f) => f.event === "end", 10_000);
    expect((await joined.done).at(-1)?.event).toBe("end");
    for (let i = 0; i < 200 && (await aliceRunStatus()) === "running"; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await aliceRunStatus()).toBe("interrupted");
    // then the queued run starts, on the real release
    const a2status = async () => (await a2.json<{ status: string }>("GET", `/threads/${aliceThread}/runs/${queued}`)).status;
    for (let i = 0; i < 400 && ["pending", "running"].includes(await a2status()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await a2status()).toBe("success");
  });
});
