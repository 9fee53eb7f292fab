import { describe, expect, it } from "vitest";
import { Checkpointer, MemoryCheckpointStore } from "../../src/checkpoints";
import type { CheckpointMetadata } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import type { AgentState } from "../../src/state";

const RUN = { agent_name: "default", model_name: "gpt-4.1-mini", thinking_enabled: false, is_plan_mode: false, assistant_id: "lead_agent", parents: {} };

/** Queue `metas` as consecutive checkpoints of one thread; returns their ids. */
async function write(cp: Checkpointer, threadId: string, metas: CheckpointMetadata[]): Promise<string[]> {
  let parent: { checkpointId: string | null; values: AgentState | undefined } = { checkpointId: null, values: undefined };
  const ids: string[] = [];
  for (const [i, meta] of metas.entries()) {
    const values = { messages: [...(parent.values?.messages ?? []), humanMessage(`m${i}`, { id: `m${i}` })] };
    const { loaded, durable } = cp.queue(threadId, parent, values, meta);
    await durable;
    parent = { checkpointId: loaded.record.checkpointId, values };
    ids.push(loaded.record.checkpointId);
  }
  return ids;
}

describe("run metadata stored once per run", () => {
  it("a key that changes mid-run is stored in that row and read back; the others are inherited", async () => {
    const store = new MemoryCheckpointStore();
    const cp = new Checkpointer(store);
    const ids = await write(cp, "t", [
      { ...RUN, step: -1, source: "input", run_id: "r1", writer: "__input__", __next: ["model"] },
      { ...RUN, step: 0, source: "loop", run_id: "r1", writer: "model", __next: ["tools"] },
      { ...RUN, model_name: "other-model", step: 1, source: "loop", run_id: "r1", writer: "tools" },
    ]);
    const raw = await store.list("t");
    expect(raw[0].metadata).toEqual({ model_name: "other-model", step: 1, source: "loop", run_id: "r1", writer: "tools", __run_base: ids[0] });
    expect(raw[1].metadata).toEqual({ step: 0, source: "loop", run_id: "r1", writer: "model", __next: ["tools"], __run_base: ids[0] });
    // Read by a checkpointer that never saw the writes: everything comes back, own keys are not inherited.
    const fresh = new Checkpointer(store);
    const listed = await fresh.list("t");
    expect(listed[0].metadata).toEqual({ ...RUN, model_name: "other-model", step: 1, source: "loop", run_id: "r1", writer: "tools" });
    expect(listed[1].metadata).toEqual({ ...RUN, step: 0, source: "loop", run_id: "r1", writer: "model", __next: ["tools"] });
    expect((await fresh.load("t", ids[1]))!.record.metadata).toEqual(listed[1].metadata);
    // A page that does not hold the run's first row still reads it.
    expect((await new Checkpointer(store).list("t", { limit: 1 }))[0].metadata).toEqual(listed[0].metadata);
  });

  it("a row that drops a run key is stored whole (it must not inherit it), and starts a new base", async () => {
    const store = new MemoryCheckpointStore();
    const cp = new Checkpointer(store);
    const { is_plan_mode: _dropped, ...withoutPlan } = RUN;
    await write(cp, "d", [
      { ...RUN, step: -1, source: "input", run_id: "r1" },
      { ...withoutPlan, step: 0, source: "loop", run_id: "r1" },
      { ...withoutPlan, step: 1, source: "loop", run_id: "r1" },
    ]);
    const raw = await store.list("d");
    expect(raw[1].metadata).toEqual({ ...withoutPlan, step: 0, source: "loop", run_id: "r1" });
    expect(raw[0].metadata.__run_base).toBe(raw[1].checkpointId);
    const listed = await new Checkpointer(store).list("d");
    expect(listed[1].metadata).not.toHaveProperty("is_plan_mode");
    expect(listed[0].metadata).not.toHaveProperty("is_plan_mode");
    expect(listed[2].metadata).toHaveProperty("is_plan_mode", false);
  });

  it("a run whose metadata is too small to inherit stores every checkpoint whole, and reads them back as written", async () => {
    const store = new MemoryCheckpointStore();
    const cp = new Checkpointer(store);
    const metas: CheckpointMetadata[] = [
      { parents: {}, step: -1, source: "input", run_id: "small", writer: "__input__", __next: ["model"] },
      { parents: {}, step: 0, source: "loop", run_id: "small", writer: "model", __next: ["tools"] },
      { parents: {}, step: 1, source: "loop", run_id: "small", writer: "tools", __next: ["model"] },
      { parents: {}, step: 2, source: "loop", run_id: "small", writer: "model" },
    ];
    await write(cp, "s", metas);
    const raw = (await store.list("s")).reverse();
    expect(raw.map((r) => r.metadata)).toEqual(metas);
    expect((await new Checkpointer(store).list("s")).reverse().map((r) => r.metadata)).toEqual(metas);
    // The next run on the thread with larger metadata is a base again: its later checkpoints inherit.
    const head = raw[raw.length - 1].checkpointId;
    const state = (await cp.load("s"))!.values;
    const a = cp.queue("s", { checkpointId: head, values: state }, { messages: [...state.messages, humanMessage("x", { id: "x" })] }, { ...RUN, step: 3, source: "input", run_id: "big" });
    await a.durable;
    const b = cp.queue("s", { checkpointId: a.loaded.record.checkpointId, values: a.loaded.values }, { messages: [...a.loaded.values.messages, humanMessage("y", { id: "y" })] }, { ...RUN, step: 4, source: "loop", run_id: "big" });
    await b.durable;
    expect((await store.get("s", b.loaded.record.checkpointId))!.metadata.__run_base).toBe(a.loaded.record.checkpointId);
  });

  it("a new run, or a checkpoint not on top of the run's last one, stores the metadata again", async () => {
    const store = new MemoryCheckpointStore();
    const cp = new Checkpointer(store);
    await write(cp, "n", [
      { ...RUN, step: -1, source: "input", run_id: "r1" },
      { ...RUN, step: 0, source: "loop", run_id: "r2" },
    ]);
    const raw = await store.list("n");
    for (const r of raw) expect(r.metadata).not.toHaveProperty("__run_base");
    // A fork from the first checkpoint by the same run id does not inherit through a checkpoint it is not on top of.
    const first = raw[1];
    const { loaded, durable } = cp.queue("n", { checkpointId: first.checkpointId, values: { messages: [] } }, { messages: [] }, { ...RUN, step: 1, source: "fork", run_id: "r2" });
    await durable;
    expect((await store.get("n", loaded.record.checkpointId))!.metadata).not.toHaveProperty("__run_base");
  });
});
