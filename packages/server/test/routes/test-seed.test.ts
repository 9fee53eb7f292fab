import { afterEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
const saved = { seed: process.env.DEERFLOW_ENABLE_TEST_SEED, env: process.env.DEER_FLOW_ENV };
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  for (const [k, v] of [["DEERFLOW_ENABLE_TEST_SEED", saved.seed], ["DEER_FLOW_ENV", saved.env]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const seed = {
  thread_id: "seeded-thread",
  runs: [
    { run_id: "run-1", created_at: "2026-01-01T10:00:00.000Z", messages: [{ role: "human", content: "first question", id: "m1" }, { role: "ai", content: "first answer", id: "m2" }] },
    { run_id: "run-2", created_at: "2026-01-01T10:05:00.000Z", messages: [{ role: "human", content: "second question", id: "m3" }, { role: "ai", content: "second answer", id: "m4" }] },
  ],
};

describe("DEERFLOW_ENABLE_TEST_SEED (DeerFlow's test-only seeding route)", () => {
  it("is not mounted without the variable", async () => {
    delete process.env.DEERFLOW_ENABLE_TEST_SEED;
    gw = await startTestGateway();
    expect((await postJson(`${gw.url}/api/test-only/seed-runs`, seed)).status).toBe(404);
  });

  it("with DEERFLOW_ENABLE_TEST_SEED=1: a thread with finished runs and their transcripts, no checkpoint", async () => {
    process.env.DEERFLOW_ENABLE_TEST_SEED = "1";
    delete process.env.DEER_FLOW_ENV;
    gw = await startTestGateway();
    const r = await postJson(`${gw.url}/api/test-only/seed-runs`, seed);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, thread_id: "seeded-thread", runs: 2 });
    const runs = (await (await fetch(`${gw.url}/api/threads/seeded-thread/runs`)).json()) as Array<{ run_id: string; status: string }>;
    expect(runs.map((x) => [x.run_id, x.status]).sort()).toEqual([
      ["run-1", "success"],
      ["run-2", "success"],
    ]);
    const page = (await (await fetch(`${gw.url}/api/threads/seeded-thread/messages/page?limit=10`)).json()) as { messages?: Array<{ content: unknown }> };
    expect(JSON.stringify(page)).toMatch(/first question[\s\S]*first answer[\s\S]*second question[\s\S]*second answer/);
    const state = (await (await fetch(`${gw.url}/api/threads/seeded-thread/state`)).json()) as { values?: { messages?: unknown[] } };
    expect(state.values?.messages ?? []).toEqual([]);
  });

  it("is never mounted in production", async () => {
    process.env.DEERFLOW_ENABLE_TEST_SEED = "1";
    process.env.DEER_FLOW_ENV = "production";
    gw = await startTestGateway();
    expect((await postJson(`${gw.url}/api/test-only/seed-runs`, seed)).status).toBe(404);
  });
});
