/**
 * Red team: what a client can make Redis and the reader process hold through
 * a run's stream, with real processes. One user floods several runs at once;
 * each run's Redis stream stays capped at `queue_maxsize` (+ the end marker)
 * the whole time and carries its TTL. `Last-Event-ID` values sent over HTTP
 * to the process that does not execute the run — too old, far in the future,
 * Redis range tokens, a 100 KB header, a header with a raw CR — never hold a
 * connection open, never replay more than the window, and never break the
 * process.
 */
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createThread, joinRun, runIdOf, streamRun, waitForRun } from "../helpers/runs-api";
import type { SseFrame } from "../helpers/sse-client";
import { startDeployment } from "./deployment";
import type { Deployment } from "./deployment";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;
const CAP = 16;

/** A raw HTTP/1.1 GET with the given header lines; the status line of the answer (or what closed the socket). */
function rawGet(url: string, path: string, headerLines: string[]): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n${headerLines.map((h) => `${h}\r\n`).join("")}Connection: close\r\n\r\n`);
    });
    let got = "";
    s.on("data", (b) => {
      got += b.toString("latin1");
      const eol = got.indexOf("\r\n");
      if (eol >= 0) {
        s.destroy();
        resolve(got.slice(0, eol));
      }
    });
    s.once("error", reject);
    s.once("close", () => resolve(got.split("\r\n")[0] || "closed"));
  });
}

describe.skipIf(!PG || !REDIS)("red team: stream limits across processes", { timeout: 60_000 }, () => {
  let d: Deployment;
  let redis: Redis;
  let tid: string;
  let runId: string;
  let frames: SseFrame[];

  beforeAll(async () => {
    d = await startDeployment({ processes: 2, auth: false, queueMaxsize: CAP });
    redis = new Redis(REDIS!);
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") console.error(d?.output().slice(-6000));
  });

  afterAll(async () => {
    await redis?.quit();
    await d?.stop();
  });

  it("one user's concurrent floods: every run's Redis stream stays within queue_maxsize (+ end) all along, with its TTL", async () => {
    const [p1, p2] = d.procs;
    const runs = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const api = (i % 2 ? p2 : p1)!.api;
        const t = await createThread(api);
        const s = await streamRun(api, t, `[stream 120 20] flood ${i}`);
        return { t, s, id: await runIdOf(s) };
      }),
    );
    const keys = runs.map((r) => `deerflow:stream_bridge:${r.id}`);
    let longest = 0;
    let samples = 0;
    // sample every stream's length while the floods run (each sample is a real XLEN round trip)
    while (runs.some((r) => !r.s.closed)) {
      const lens = await Promise.all(keys.map((k) => redis.xlen(k)));
      longest = Math.max(longest, ...lens);
      samples++;
      await new Promise((r) => setImmediate(r));
    }
    for (const r of runs) expect((await r.s.done).at(-1)?.event).toBe("end");
    expect(samples).toBeGreaterThan(3);
    // the floods wrote more than the window: the cap, not the run, bounded them
    expect(runs[0]!.s.frames.filter((f) => f.id).length).toBeGreaterThan(CAP + 1);
    expect(longest).toBeLessThanOrEqual(CAP + 1);
    for (const k of keys) {
      expect(await redis.xlen(k)).toBeLessThanOrEqual(CAP + 1);
      expect(await redis.ttl(k)).toBeGreaterThan(0);
    }
    // the first run serves the Last-Event-ID tests below
    tid = runs[0]!.t;
    runId = runs[0]!.id;
    frames = await runs[0]!.s.done;
    expect(await waitForRun(p2!.api, tid, runId, (s) => s !== "running")).toBe("success");
  });

  it("an id older than the window gets exactly one gap and the connection ends; a far-future id ends at once; range tokens replay only the window", async () => {
    const p2 = d.procs[1]!;
    const first = frames.find((f) => f.id)!.id!;
    const old = await (await joinRun(p2.api, tid, runId, first)).done;
    expect(old.map((f) => f.event)).toEqual(["gap"]);
    expect(old[0]!.data).toMatchObject({ code: "stream_replay_gap", run_id: runId, requested_event_id: first, recovery: "reload_durable_state" });
    const future = await Promise.race([
      (await joinRun(p2.api, tid, runId, "999999999999999-999999999999999")).done,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("a far-future Last-Event-ID held the stream open")), 15_000)),
    ]);
    expect(future.filter((f) => f.event !== "end")).toEqual([]);
    expect(future.at(-1)?.event).toBe("end");
    // `0-0` is an id, older than the window: one gap, like any trimmed id
    expect((await (await joinRun(p2.api, tid, runId, "0-0")).done).map((f) => f.event)).toEqual(["gap"]);
    for (const token of ["*", "$", "+", "-", "0", ">"]) {
      const got = await (await joinRun(p2.api, tid, runId, token)).done;
      expect(got.at(-1)?.event, token).toBe("end");
      // never more than the window, whatever the token
      expect(got.filter((f) => f.id).length, token).toBeLessThanOrEqual(CAP);
    }
  });

  it("a 100 KB Last-Event-ID is refused by the HTTP parser; a raw CR or LF in it is refused; the processes keep serving", async () => {
    const p2 = d.procs[1]!;
    const path = `/api/threads/${tid}/runs/${runId}/stream`;
    expect(await rawGet(p2.url, path, [`Last-Event-ID: ${"9".repeat(100_000)}`])).toMatch(/^HTTP\/1\.1 431/);
    expect(await rawGet(p2.url, path, ["Last-Event-ID: 1-1\rX-Injected: yes"])).toMatch(/^HTTP\/1\.1 400|^closed$/);
    expect(await rawGet(p2.url, path, ["Last-Event-ID: 1-1\nX-Injected: yes"])).toMatch(/^HTTP\/1\.1 (400|200)|^closed$/);
    expect(await rawGet(p2.url, path, [`Last-Event-ID: ${"9".repeat(4000)}-1`])).toMatch(/^HTTP\/1\.1 200/);
    for (const p of d.procs) expect((await fetch(`${p.url}/health`)).status).toBe(200);
    const again = await (await joinRun(p2.api, tid, runId)).done;
    expect(again.at(-1)?.event).toBe("end");
  });
});
