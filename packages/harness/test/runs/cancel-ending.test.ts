/**
 * A cancel that reaches a run after its agent returned (the run only has its
 * end left to write) is refused as for a finished run — DeerFlow's 409 "Run
 * X is not cancellable (status: success)" — and leaves the run `success`,
 * both in the process that executes it and from another process whose cancel
 * read the record before the final status was written.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { createMemoryStores, MemoryRunLeases, MemoryRunLock, TERMINAL_RUN_STATUSES } from "../../src/persistence";
import type { RunRecord } from "../../src/persistence";
import { createAgent } from "../../src/runtime";
import type { Agent } from "../../src/runtime";
import { createMemoryRunSignals, createMemoryStreamBridge, RunService } from "../../src/runs";
import type { RunBackends } from "../../src/runs";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { runRequest } from "./run-request";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** A promise and the function that settles it. */
function latch(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Every macrotask queued so far ran: the microtasks a settled promise started (here: the run service's continuation) are done. */
const drained = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A runtime whose lead agent answers "done"; `agentReturned` opens when an agent run's result settled. */
async function runtimeWithSignal() {
  const dir = mkdtempSync(path.join(tmpdir(), "df-cancel-ending-"));
  const model = new ScriptedModel(["done"], { onExhausted: "repeat-last" });
  const checkpointer = new MemoryCheckpointStore();
  const agentReturned = latch();
  const runtime = await DeerFlowRuntime.open({
    dataDir: dir,
    checkpointer,
    stores: createMemoryStores(),
    log: () => undefined,
    agentFactory: () => {
      const agent = createAgent({ model, tools: [], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
      const watched: Agent = Object.create(agent);
      watched.stream = (input, options) => {
        const s = agent.stream(input, options);
        const result = s.result.then((r) => {
          agentReturned.open();
          return r;
        });
        return { [Symbol.asyncIterator]: () => s[Symbol.asyncIterator](), result };
      };
      return watched;
    },
  });
  open.push(runtime);
  return { runtime, agentReturned };
}

const refusedSuccess = (runId: string) => ({ code: "run_not_cancellable", message: `Run ${runId} is not cancellable (status: success)` });

describe("a cancel that comes after the run's agent returned", () => {
  it("in the executing process: refused (status: success), the run stays success", async () => {
    const { runtime, agentReturned } = await runtimeWithSignal();
    // The record's first write is held: the run executes, and its end waits for the record to be stored.
    const recordGate = latch();
    const create = runtime.stores.runs.create.bind(runtime.stores.runs);
    runtime.stores.runs.create = async (rec: RunRecord) => {
      await recordGate.promise;
      return create(rec);
    };
    const run = await runtime.runs.create(runRequest("end-1", "hi"), { waitForStore: false });
    await agentReturned.promise;
    await drained();
    const outcomes = ["interrupt", "rollback"].map((action) =>
      runtime.runs.cancel(run.runId, action as "interrupt" | "rollback", false).then(
        () => "accepted",
        (err: unknown) => err,
      ),
    );
    recordGate.open();
    for (const outcome of await Promise.all(outcomes)) expect(outcome).toMatchObject(refusedSuccess(run.runId));
    expect((await run.done).status).toBe("success");
    await run.recorded;
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("success");
  });

  it("from another process that read the record while it still said running: refused once the run ended success", async () => {
    const { runtime, agentReturned } = await runtimeWithSignal();
    const bridge = createMemoryStreamBridge({ queueMaxsize: 256, ttlSeconds: 60 });
    const shared = { lock: new MemoryRunLock(), leases: new MemoryRunLeases(), bridge, signals: createMemoryRunSignals() };
    const backends = (ownerId: string): RunBackends => ({
      ownerId,
      shared: true,
      ...shared,
      ownership: { leaseMs: 30_000, graceMs: 10_000, heartbeat: true },
      close: async () => undefined,
    });
    const a = new RunService({ host: runtime, backends: backends("A"), log: () => undefined });
    const b = new RunService({ host: runtime, backends: backends("B"), log: () => undefined });
    open.push(a, b);
    // A's final status write is held: A's run is over, its record still says running.
    const finalWrite = latch();
    const finalGate = latch();
    const update = runtime.stores.runs.update.bind(runtime.stores.runs);
    runtime.stores.runs.update = async (runId, patch) => {
      if (patch.status && TERMINAL_RUN_STATUSES.has(patch.status)) {
        finalWrite.open();
        await finalGate.promise;
      }
      return update(runId, patch);
    };
    const run = await a.create(runRequest("end-2", "hi"));
    await agentReturned.promise;
    await finalWrite.promise;
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("running");
    const outcome = b.cancel(run.runId, "interrupt", true).then(
      () => "accepted",
      (err: unknown) => err,
    );
    finalGate.open();
    expect(await outcome).toMatchObject(refusedSuccess(run.runId));
    expect((await run.done).status).toBe("success");
    await run.recorded;
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("success");
  });
});
