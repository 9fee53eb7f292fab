import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, startTestGateway, until } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("the state of a run cancelled mid-loop", () => {
  it("keeps next: [model] and the pending task (so it can be resumed); a finished run has none", async () => {
    gw = await startTestGateway({ steps: [{ text: "slow answer", delayMs: 3000 }, "done"] });
    const tid = ((await (await postJson(`${gw.url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
    const run = (await (await postJson(`${gw.url}/api/threads/${tid}/runs`, { input: humanInput("q1") })).json()) as { run_id: string };
    await until(() => gw!.model.callCount > 0);
    const cancel = await fetch(`${gw.url}/api/threads/${tid}/runs/${run.run_id}/cancel?wait=1&action=interrupt`, { method: "POST" });
    expect(cancel.status).toBe(204);
    const state = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as {
      next: string[];
      tasks: Array<Record<string, unknown>>;
      metadata: Record<string, unknown>;
    };
    expect(state.next).toEqual(["model"]);
    expect(state.tasks).toEqual([expect.objectContaining({ name: "model", path: ["__pregel_pull", "model"], error: null, interrupts: [] })]);
    expect(Object.keys(state.metadata).some((k) => k.startsWith("__"))).toBe(false);
    const thread = (await (await fetch(`${gw.url}/api/threads/${tid}`)).json()) as { status: string };
    expect(thread.status).toBe("interrupted");
    // The next run continues the thread and ends it: nothing is pending any more.
    const r2 = await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("q2") });
    expect(r2.status).toBe(200);
    const after = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as { next: string[]; tasks: unknown[] };
    expect(after).toMatchObject({ next: [], tasks: [] });
    expect(((await (await fetch(`${gw.url}/api/threads/${tid}`)).json()) as { status: string }).status).toBe("idle");
  });
});
