import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Checkpointer, MemoryCheckpointStore } from "../../src/checkpoints";
import type { CheckpointRecord } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Wait for a condition (the event itself), bounded generously so a loaded machine only makes it slower. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A memory store whose writes commit only when the test says so, or fail. */
class ControlledStore extends MemoryCheckpointStore {
  readonly puts: CheckpointRecord[] = [];
  private held: Array<() => void> = [];
  hold = false;
  failAt: number | undefined;

  override async put(record: CheckpointRecord): Promise<void> {
    const n = this.puts.push(record);
    if (n === this.failAt) {
      await sleep(5);
      throw new Error(`disk full at write ${n}`);
    }
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    return super.put(record);
  }

  release(): void {
    for (const r of this.held.splice(0)) r();
  }
}

// Read-only: the loop calls it without waiting for the checkpoint before it (a tool with side effects waits).
const slowTool = tool({
  name: "slow",
  description: "takes a while",
  schema: z.object({}),
  sideEffects: false,
  execute: async () => {
    await sleep(30);
    return "done";
  },
});

describe("checkpoint writes of a run", () => {
  it("the next model call does not wait for a checkpoint to commit; the run returns once every write is durable", async () => {
    const store = new ControlledStore();
    store.hold = true;
    const model = new ScriptedModel([{ text: "calling", toolCalls: [{ name: "slow", args: {} }] }, "final"]);
    const agent = createAgent({ model, tools: [slowTool], checkpointer: store });
    let settled = false;
    const run = agent.invoke({ messages: [humanMessage("go")] }, { threadId: "t-pipe" }).then((r) => {
      settled = true;
      return r;
    });
    // With every write still uncommitted, the loop went on through both model calls and the tool.
    await until(() => model.callCount >= 2, "the second model call");
    expect(model.callCount).toBe(2);
    expect(store.puts.length).toBeGreaterThanOrEqual(4);
    await sleep(20);
    expect(settled).toBe(false);
    store.release();
    const result = await run;
    expect(result.status).toBe("success");
    model.assertComplete();
    // Parents chain in the order the writes were queued.
    const ids = store.puts.map((r) => r.checkpointId);
    expect(store.puts.slice(1).map((r) => r.parentId)).toEqual(ids.slice(0, -1));
    expect((await new Checkpointer(store).load("t-pipe"))!.values.messages.map((m) => m.content)).toEqual(["go", "calling", "done", "final"]);
  });

  it("a failed checkpoint write fails the run at its next step (no model call after it)", async () => {
    const store = new ControlledStore();
    store.failAt = 2; // the checkpoint after the first model call
    const model = new ScriptedModel([{ text: "calling", toolCalls: [{ name: "slow", args: {} }] }, "never"]);
    const agent = createAgent({ model, tools: [slowTool], checkpointer: store });
    const result = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "t-fail" });
    expect(result.status).toBe("error");
    expect(result.error?.message).toMatch(/disk full at write 2/);
    expect(model.callCount).toBe(1);
  });

  it("a failed last write fails the run even though the loop had finished", async () => {
    const model = new ScriptedModel(["only answer"]);
    const store = new ControlledStore();
    store.failAt = 2; // input, then the model's answer
    const agent = createAgent({ model, checkpointer: store });
    const result = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "t-last" });
    expect(result.status).toBe("error");
    expect(result.error?.message).toMatch(/disk full at write 2/);
    // The failed head is not served from the cache: the thread reads as its last durable checkpoint.
    const state = await agent.getState("t-last");
    expect(state?.values.messages.map((m) => m.content)).toEqual(["go"]);
  });
});

describe("Checkpointer.queue", () => {
  it("returns the checkpoint at once and serves it as the head before it commits", async () => {
    const store = new ControlledStore();
    store.hold = true;
    const cp = new Checkpointer(store);
    const { loaded, durable } = cp.queue("q", { checkpointId: null, values: undefined }, { messages: [humanMessage("a", { id: "1" })] }, { step: -1, source: "input" });
    expect(loaded.record.parentId).toBeNull();
    let done = false;
    void durable.then(() => (done = true));
    await sleep(5);
    expect(done).toBe(false);
    store.release();
    await durable;
    expect((await cp.load("q"))!.record.checkpointId).toBe(loaded.record.checkpointId);
  });

  it("drops a cached head whose write failed", async () => {
    const store = new ControlledStore();
    store.failAt = 1;
    const cp = new Checkpointer(store);
    const { durable } = cp.queue("f", { checkpointId: null, values: undefined }, { messages: [humanMessage("a")] }, { step: -1, source: "input" });
    await expect(durable).rejects.toThrow(/disk full/);
    expect(await cp.load("f")).toBeUndefined();
  });
});
