import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import type { CheckpointRecord } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

/** A memory store whose writes commit only when the test says so. */
class HeldStore extends MemoryCheckpointStore {
  private held: Array<() => void> = [];
  hold = false;

  /** Writes waiting for {@link release}. */
  get waiting(): number {
    return this.held.length;
  }

  override async put(record: CheckpointRecord): Promise<void> {
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    return super.put(record);
  }

  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }
}

function agentWith(sideEffects: boolean, store: MemoryCheckpointStore, log: string[]) {
  const lookup = tool({
    name: "lookup",
    description: "looks something up",
    schema: z.object({}),
    ...(sideEffects ? {} : { sideEffects: false }),
    execute: () => {
      log.push("tool runs");
      return "found";
    },
  });
  const model = new ScriptedModel([{ text: "calling", toolCalls: [{ name: "lookup", args: {} }] }, "final"]);
  return createAgent({ model, tools: [lookup], checkpointer: store });
}

describe("onDurableWait", () => {
  it("brackets the wait for the checkpoint before a tool with side effects, and the wait before the run returns", async () => {
    const store = new HeldStore();
    const log: string[] = [];
    const agent = agentWith(true, store, log);
    store.hold = true;
    let firstWait!: () => void;
    const waiting = new Promise<void>((resolve) => (firstWait = resolve));
    const run = agent.invoke(
      { messages: [humanMessage("go")] },
      {
        threadId: "t-wait",
        streamMode: ["values"],
        onEvent: (ev) => log.push(`values ${(ev.data as { messages: unknown[] }).messages.length}`),
        onDurableWait: (w) => {
          log.push(w ? "wait" : "waited");
          if (w) firstWait();
        },
      },
    );
    // The model step's checkpoint is queued, not committed: the run waits for it before the tool.
    await waiting;
    expect(store.waiting).toBeGreaterThan(0);
    expect(log).toEqual(["values 1", "values 2", "wait"]);
    store.release();
    const result = await run;
    expect(result.status).toBe("success");
    // The tool runs only after the wait; the run's last wait comes after its last `values`.
    expect(log).toEqual(["values 1", "values 2", "wait", "waited", "tool runs", "values 3", "values 4", "wait", "waited"]);
  });

  it("a run whose tools only read waits only before it returns", async () => {
    const log: string[] = [];
    const agent = agentWith(false, new MemoryCheckpointStore(), log);
    const result = await agent.invoke(
      { messages: [humanMessage("go")] },
      { threadId: "t-read", streamMode: ["values"], onEvent: () => log.push("values"), onDurableWait: (waiting) => log.push(waiting ? "wait" : "waited") },
    );
    expect(result.status).toBe("success");
    expect(log).toEqual(["values", "values", "tool runs", "values", "values", "wait", "waited"]);
  });
});
