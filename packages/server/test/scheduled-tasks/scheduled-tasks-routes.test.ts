import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduledRunFinished } from "@deerflow-ts/harness/scheduler";
import type { GatewayContext } from "../../src/context";
import { onScheduledRunFinished, scheduledTasksFor } from "../../src/scheduled-tasks";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

type Json = Record<string, any>;

describe("scheduled tasks routes (real HTTP server, scripted model)", () => {
  let gw: TestGateway;
  let api: string;
  const finished: ScheduledRunFinished[] = [];
  const send = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${api}${p}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  };
  const tasks = () => scheduledTasksFor({ runtime: gw.gateway.runtime } as GatewayContext);

  beforeAll(async () => {
    gw = await startTestGateway({ steps: ["first report", "second report", "third report"] });
    api = `${gw.url}/api`;
    // subscribed before the scheduler opened: the hook a chat channel uses
    onScheduledRunFinished({ runtime: gw.gateway.runtime }, (e) => void finished.push(e));
  });
  afterAll(async () => {
    await gw.close();
  });

  it("creates a cron task with DeerFlow's fields and computes its next slot in the task's zone", async () => {
    const created = await send("POST", "/scheduled-tasks", { title: "Morning news", prompt: "Summarise the news", schedule_type: "cron", schedule_spec: { cron: " 0  9 * * * " }, timezone: "Europe/London" });
    expect(created.status).toBe(200);
    const t = created.body as Json;
    expect(t).toMatchObject({
      thread_id: null,
      context_mode: "fresh_thread_per_run",
      title: "Morning news",
      prompt: "Summarise the news",
      schedule_type: "cron",
      schedule_spec: { cron: "0 9 * * *" },
      timezone: "Europe/London",
      status: "enabled",
      last_run_at: null,
      last_run_id: null,
      last_thread_id: null,
      last_error: null,
      run_count: 0,
    });
    expect(t.id).toMatch(/^task-[0-9a-f]{32}$/);
    const next = new Date(t.next_run_at);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/London", hour: "2-digit", minute: "2-digit" }).format(next)).toBe("09:00");
    expect((await send("GET", "/scheduled-tasks")).body.map((x: Json) => x.id)).toContain(t.id);
    expect((await send("GET", `/scheduled-tasks/${t.id}`)).body).toEqual(t);

    const patched = await send("PATCH", `/scheduled-tasks/${t.id}`, { schedule_spec: { cron: "30 7 * * 1" }, timezone: "America/New_York", title: "Weekly" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ title: "Weekly", schedule_spec: { cron: "30 7 * * 1" }, timezone: "America/New_York" });
    expect(new Date(patched.body.next_run_at).getUTCDay()).toBe(1);

    expect((await send("POST", `/scheduled-tasks/${t.id}/pause`)).body.status).toBe("paused");
    expect((await send("POST", `/scheduled-tasks/${t.id}/resume`)).body.status).toBe("enabled");
    expect((await send("DELETE", `/scheduled-tasks/${t.id}`)).body).toEqual({ id: t.id, deleted: true });
    expect((await send("GET", `/scheduled-tasks/${t.id}`)).status).toBe(404);
  });

  it("refuses unusable schedules with 422 and the reason; an unknown thread for reuse_thread is 404", async () => {
    const base = { title: "t", prompt: "p", schedule_type: "cron", schedule_spec: { cron: "0 9 * * *" }, timezone: "UTC" };
    const cases: Array<[Json, number, RegExp]> = [
      [{ ...base, timezone: "Mars/Base" }, 422, /Unknown timezone/],
      [{ ...base, schedule_spec: { cron: "0 9 * *" } }, 422, /exactly 5 fields/],
      [{ ...base, schedule_spec: {} }, 422, /requires schedule_spec.cron/],
      [{ ...base, schedule_type: "once", schedule_spec: { run_at: "2020-01-01T00:00:00Z" } }, 422, /must be in the future/],
      [{ ...base, schedule_type: "once", schedule_spec: { run_at: new Date(Date.now() + 10_000).toISOString() } }, 422, /at least 60 seconds/],
      [{ ...base, context_mode: "reuse_thread" }, 422, /reuse_thread requires thread_id/],
      [{ ...base, context_mode: "reuse_thread", thread_id: "no-such-thread" }, 404, /Thread not found/],
    ];
    for (const [body, status, detail] of cases) {
      const r = await send("POST", "/scheduled-tasks", body);
      expect([r.status, JSON.stringify(r.body.detail)]).toEqual([status, expect.stringMatching(detail)]);
    }
    expect((await send("POST", "/scheduled-tasks", { ...base, schedule_type: "hourly" })).status).toBe(422);
  });

  it("trigger runs the task through the run service on a fresh thread; its history, thread link and run-finished event follow", async () => {
    const t = (await send("POST", "/scheduled-tasks", { title: "Now", prompt: "Write the report", schedule_type: "cron", schedule_spec: { cron: "0 3 * * *" }, timezone: "UTC" })).body as Json;
    expect((await send("POST", `/scheduled-tasks/${t.id}/trigger`)).body).toEqual({ id: t.id, triggered: true });
    await tasks().service.idle();
    const runs = (await send("GET", `/scheduled-tasks/${t.id}/runs`)).body as Json[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ task_id: t.id, trigger: "manual", status: "success", error: null });
    expect(runs[0].run_id).toEqual(expect.any(String));
    const threadId = runs[0].thread_id as string;
    const state = (await send("GET", `/threads/${threadId}/state`)).body as Json;
    expect(state.values.messages.map((m: Json) => [m.type, m.content])).toEqual([
      ["human", "Write the report"],
      ["ai", "first report"],
    ]);
    const threadRuns = (await send("GET", `/threads/${threadId}/runs`)).body as Json[];
    expect(threadRuns.map((r) => [r.run_id, r.status, r.metadata.scheduled_task_id])).toEqual([[runs[0].run_id, "success", t.id]]);
    expect((await send("GET", `/threads/${threadId}/scheduled-tasks`)).body.map((x: Json) => x.id)).toEqual([t.id]);
    expect((await send("GET", `/scheduled-tasks/${t.id}`)).body).toMatchObject({ status: "enabled", run_count: 1, last_run_id: runs[0].run_id, last_thread_id: threadId });
    expect(finished.map((e) => [e.task.id, e.run.status, e.run.threadId])).toEqual([[t.id, "success", threadId]]);
  });

  it("reuse_thread runs every occurrence on the caller's thread", async () => {
    const thread = (await send("POST", "/threads", {})).body as Json;
    const t = (await send("POST", "/scheduled-tasks", { title: "Same", prompt: "Again", context_mode: "reuse_thread", thread_id: thread.thread_id, schedule_type: "cron", schedule_spec: { cron: "0 4 * * *" }, timezone: "UTC" })).body as Json;
    expect(t).toMatchObject({ context_mode: "reuse_thread", thread_id: thread.thread_id });
    for (let i = 0; i < 2; i++) {
      expect((await send("POST", `/scheduled-tasks/${t.id}/trigger`)).status).toBe(200);
      await tasks().service.idle();
    }
    const runs = (await send("GET", `/scheduled-tasks/${t.id}/runs?limit=1`)).body as Json[];
    expect(runs).toHaveLength(1);
    expect((await send("GET", `/scheduled-tasks/${t.id}/runs?limit=500`)).status).toBe(422);
    const state = (await send("GET", `/threads/${thread.thread_id}/state`)).body as Json;
    expect(state.values.messages.filter((m: Json) => m.type === "human").map((m: Json) => m.content)).toEqual(["Again", "Again"]);
    expect((await send("GET", `/threads/${thread.thread_id}/scheduled-tasks`)).body.map((x: Json) => x.id)).toEqual([t.id]);
  });

  it("another user's task is 404 on every route and missing from the lists", async () => {
    const other = await tasks().store.create({
      id: "task-someone-elses",
      userId: "someone-else",
      threadId: null,
      contextMode: "fresh_thread_per_run",
      assistantId: "lead_agent",
      title: "Theirs",
      prompt: "p",
      scheduleType: "cron",
      scheduleSpec: { cron: "0 9 * * *" },
      timezone: "UTC",
      nextRunAt: null,
      createdAt: new Date().toISOString(),
    });
    for (const [method, route, body] of [
      ["GET", `/scheduled-tasks/${other.id}`],
      ["PATCH", `/scheduled-tasks/${other.id}`, { title: "mine now" }],
      ["POST", `/scheduled-tasks/${other.id}/pause`],
      ["POST", `/scheduled-tasks/${other.id}/resume`],
      ["POST", `/scheduled-tasks/${other.id}/trigger`],
      ["GET", `/scheduled-tasks/${other.id}/runs`],
      ["DELETE", `/scheduled-tasks/${other.id}`],
    ] as Array<[string, string, unknown?]>) {
      expect([route, method, (await send(method, route, body)).status]).toEqual([route, method, 404]);
    }
    expect((await send("GET", "/scheduled-tasks")).body.map((x: Json) => x.id)).not.toContain(other.id);
    expect(await tasks().store.get(other.id)).toMatchObject({ title: "Theirs", status: "enabled", runCount: 0 });
  });
});
