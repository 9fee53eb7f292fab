/**
 * Red team: a stale owner and lease races under real process death.
 *
 * - SIGSTOP the executing process past lease + grace while its model call is
 *   in flight (the answer reaches its socket while it is frozen), let one of
 *   two candidates take the run over and finish it, then SIGCONT the old
 *   owner: its late step, events and end must be refused; the run record, the
 *   thread state and the durable stream must show one writer; its own client
 *   must not be shown the stale writer's answer.
 * - kill -9 the process that just claimed a dead owner's run (during its
 *   takeover): the remaining candidate takes it over in turn and the run ends
 *   once, with its committed tool step kept.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpScriptStep } from "@deerflow-ts/harness/testing";
import { createThread, getRun, joinRun, runIdOf, streamRun, threadMessages, waitForRun } from "../helpers/runs-api";
import { requestShape } from "../helpers/scripted-router";
import type { ServeProcess } from "../helpers/serve-process";
import { lastId } from "../helpers/sse-client";
import type { SseFrame } from "../helpers/sse-client";
import { startDeployment } from "./deployment";
import type { Deployment } from "./deployment";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

/**
 * `[tool TAG]`: a tool call first; after the tool result, the first request
 * answers `first-answer TAG` after 800 ms (the owner is frozen or killed
 * meanwhile), every later one `second-answer TAG` at once.
 */
function router(): { step: HttpScriptStep; afterTool: Map<string, number> } {
  const afterTool = new Map<string, number>();
  const step: HttpScriptStep = (req) => {
    const { human, afterTool: after } = requestShape(req);
    const hang = /\[hang-once (\w+)\]/.exec(human)?.[1];
    if (hang) {
      const n = (afterTool.get(hang) ?? 0) + 1;
      afterTool.set(hang, n);
      return n === 1 ? { fault: "hang" } : { text: `second-answer ${hang}` };
    }
    const tag = /\[tool (\w+)\]/.exec(human)?.[1];
    if (!tag) return { text: `answer: ${human}` };
    if (!after) return { text: "", toolCalls: [{ name: "ls", args: { description: "list the workspace", path: "/mnt/user-data/workspace" }, id: `call_${tag}` }] };
    const n = (afterTool.get(tag) ?? 0) + 1;
    afterTool.set(tag, n);
    return n === 1 ? { text: `first-answer ${tag}`, delayMs: 800 } : { text: `second-answer ${tag}` };
  };
  return { step, afterTool };
}

function idKey(id: string): [number, number] {
  const [ms, seq] = id.split("-").map(Number);
  return [ms!, seq!];
}
function assertOneWriter(frames: SseFrame[]): void {
  const ids = frames.map((f) => f.id).filter((x): x is string => !!x);
  for (let i = 1; i < ids.length; i++) {
    const [am, as] = idKey(ids[i - 1]!);
    const [bm, bs] = idKey(ids[i]!);
    expect(bs, `seq after ${ids[i - 1]}: ${ids[i]}`).toBe(as + 1);
    expect(bm).toBeGreaterThanOrEqual(am);
  }
  expect(frames.filter((f) => f.event === "end").length).toBe(1);
}

async function until(what: string, probe: () => boolean | Promise<boolean>, attempts = 1200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!PG || !REDIS)("red team: a stale owner and takeover races", { timeout: 60_000 }, () => {
  let d: Deployment;
  let llm: ReturnType<typeof router>;
  const stopped = new Set<number>();

  beforeAll(async () => {
    llm = router();
    d = await startDeployment({ processes: 3, auth: false, step: llm.step, leaseSeconds: 3, graceSeconds: 1 });
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") console.error(d?.output().slice(-8000));
  });

  afterAll(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
    await d?.stop();
  });

  const takeovers = (runId: string, procs: ServeProcess[]) => procs.filter((p) => p.output.includes(`taking over run ${runId}`));

  it("SIGSTOP the owner past lease + grace, SIGCONT after the takeover: one writer in the record, the state and the stream; the stale client is never shown the late answer", async () => {
    const [a, b, c] = d.procs as [ServeProcess, ServeProcess, ServeProcess];
    const tid = await createThread(a.api);
    const onA = await streamRun(a.api, tid, "[tool stale] freeze me");
    const runId = await runIdOf(onA);
    await onA.waitFor((f) => f.event === "values" && JSON.stringify(f.data).includes('"type":"tool"'), 30_000);
    // A's second model call is on its way: freeze A with it in flight
    await until("A's model call after the tool", () => (llm.afterTool.get("stale") ?? 0) >= 1);
    process.kill(a.pid, "SIGSTOP");
    stopped.add(a.pid);
    // exactly one of the two candidates takes the run over and finishes it
    await until("a takeover", () => takeovers(runId, [b, c]).length > 0, 3000);
    expect(await waitForRun(b.api, tid, runId, (s) => s !== "running" && s !== "pending", 1200)).toBe("success");
    expect(takeovers(runId, [b, c]).length).toBe(1);
    const finished = await threadMessages(b.api, tid);
    expect(finished.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(finished[3]!.content).toBe("second-answer stale");

    // the stale owner wakes up with its answer in its socket
    process.kill(a.pid, "SIGCONT");
    stopped.delete(a.pid);
    // it notices (a refused renewal, checkpoint write or append) and stops the run without ending it
    await a.waitFor(new RegExp(`(lost the lease of run ${runId}|the lease of run ${runId} ran out|run ${runId} was taken over|[Rr]un ${runId} is executed by another process)`), 20_000);
    // What the woken owner sends its own client (an error at the last stored id, then end) follows its wake-up at once;
    // it must never have been shown the stale writer's late answer.
    await Promise.race([onA.done, new Promise((_, reject) => setTimeout(() => reject(new Error("the stale owner's client still hangs 15 s after SIGCONT")), 15_000))]);
    onA.abort();
    expect(JSON.stringify(onA.frames)).not.toContain("first-answer");
    expect(onA.frames.slice(-2).map((f) => f.event)).toEqual(["error", "end"]);

    // one writer everywhere: the record, the state, the durable stream
    expect((await getRun(c.api, tid, runId)).status).toBe("success");
    const after = await threadMessages(c.api, tid);
    expect(after).toEqual(finished);
    const replay = await (await joinRun(c.api, tid, runId)).done;
    assertOneWriter(replay);
    expect(JSON.stringify(replay)).not.toContain("first-answer");
    // the client reconnects where it stopped and gets the rest of the run
    const rest = await (await joinRun(b.api, tid, runId, lastId(onA.frames))).done;
    expect(rest.at(-1)?.event).toBe("end");
    expect(JSON.stringify(rest)).toContain("second-answer stale");
  });

  // An owner frozen past lease + grace wakes, finds its lease gone (a refused renewal, or its lease ran out past the
  // grace) and stops the run without publishing anything: its own client must still be let go (an `error` carrying the
  // last id the stream holds, then `end`), and resuming from there on another process gives the new owner's answer.
  it("an owner frozen inside a model call that never answers: after SIGCONT its client is not left hanging and gets the new owner's answer on reconnect", async () => {
    const [a, b, c] = d.procs.filter((p) => !p.exited && !stopped.has(p.pid)) as [ServeProcess, ServeProcess, ServeProcess];
    const tid = await createThread(a.api);
    const onA = await streamRun(a.api, tid, "[hang-once quiet] freeze me mid-call");
    const runId = await runIdOf(onA);
    await until("A's model call", () => (llm.afterTool.get("quiet") ?? 0) >= 1);
    process.kill(a.pid, "SIGSTOP");
    stopped.add(a.pid);
    await until("a takeover", () => takeovers(runId, [b, c]).length > 0, 3000);
    expect(await waitForRun(b.api, tid, runId, (st) => st !== "running" && st !== "pending", 1200)).toBe("success");
    process.kill(a.pid, "SIGCONT");
    stopped.delete(a.pid);
    await a.waitFor(new RegExp(`(lost the lease of run ${runId}|the lease of run ${runId} ran out|run ${runId} was taken over)`), 20_000);
    // A publishes nothing after waking (its model call is simply aborted): its client must still be let go
    await Promise.race([onA.done, new Promise((_, reject) => setTimeout(() => reject(new Error("the stale owner's client still hangs 15 s after SIGCONT")), 15_000))]);
    expect(JSON.stringify(onA.frames)).not.toContain("second-answer");
    // let go with an error at the last stored id, then end
    expect(onA.frames.slice(-2).map((f) => f.event)).toEqual(["error", "end"]);
    expect(JSON.stringify(onA.frames.at(-2)?.data)).toContain("executed by another process now");
    const rest = await (await joinRun(c.api, tid, runId, lastId(onA.frames))).done;
    expect(rest.at(-1)?.event).toBe("end");
    expect(JSON.stringify(rest)).toContain("second-answer quiet");
  });

  it("kill -9 of the process that just took a dead owner's run over: the last candidate resumes it; it ends once, its tool step kept", async () => {
    const live = d.procs.filter((p) => !p.exited && !stopped.has(p.pid)) as ServeProcess[];
    // a fresh owner so that two candidates remain
    const owner = await d.addProcess("P4");
    const candidates = live.filter((p) => p !== owner);
    const tid = await createThread(owner.api);
    const s = await streamRun(owner.api, tid, "[tool twice] kill the rescuer");
    const runId = await runIdOf(s);
    await s.waitFor((f) => f.event === "values" && JSON.stringify(f.data).includes('"type":"tool"'), 30_000);
    await until("the owner's model call after the tool", () => (llm.afterTool.get("twice") ?? 0) >= 1);
    // the tool step's checkpoint is written after its `values` event is sent: wait until another process reads it
    let toolStep: Awaited<ReturnType<typeof threadMessages>>[number] | undefined;
    await until("the tool step on another process", async () => (toolStep = (await threadMessages(candidates[0]!.api, tid))[2]) !== undefined, 500);
    await owner.kill9();
    await until("a first takeover", () => takeovers(runId, candidates).length > 0, 3000);
    const rescuer = takeovers(runId, candidates)[0]!;
    await rescuer.kill9();
    const survivor = candidates.find((p) => p !== rescuer)!;
    // the survivor takes over the rescuer's (now expired) claim in turn
    expect(await waitForRun(survivor.api, tid, runId, (st) => st !== "running" && st !== "pending", 2000)).toBe("success");
    const msgs = await threadMessages(survivor.api, tid);
    expect(msgs.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(msgs[2]).toEqual(toolStep);
    const replay = await (await joinRun(survivor.api, tid, runId)).done;
    assertOneWriter(replay);
    expect(replay.at(-1)?.event).toBe("end");
  });
});
