import { isoNow } from "../clock";
import { RunCancelledError } from "../errors";
import type { RunOptions, RunResult } from "../runtime";
import type { RunBackends, RunStreamWriter } from "./backend-types";
import type { LeaseKeeper } from "./lease-keeper";
import { leaseMayBeLost, recordFence, runFence } from "./lease-keeper";
import { SILENT_WRITER } from "./local-run";
import type { LocalRun } from "./local-run";
import { MessageCoalescer } from "./message-coalescer";
import { agentRunMetadata } from "./run-end";
import type { RunHost, RunPolicy } from "./run-host";
import type { SlotWaiter } from "./slot-waiter";

/** What executing a run takes from the run service. */
export interface RunExecutionContext {
  readonly host: RunHost;
  readonly backends: RunBackends;
  readonly slots: SlotWaiter;
  readonly policy: RunPolicy;
  /** The run's lease keeper (the service's: a lost lease or a failed stream stops the run). */
  leaseFor(run: LocalRun): LeaseKeeper;
  /** Logs one line (prefixed by the service). */
  log(message: string): void;
  /** Epoch ms (the service's clock). */
  clock(): number;
}

/**
 * Execute a started run up to its agent's result: open its stream, hold its
 * lease where leases are kept, wait for its thread's slot held by another
 * process, mark it running, and stream the agent with the run's settings.
 * Never throws: what stopped it is returned as `failure` for the service to
 * end the run with.
 */
export async function executeRun(run: LocalRun, at: RunExecutionContext): Promise<{ result: RunResult | undefined; failure: unknown }> {
  const { threadId, request } = run;
  const { host, backends, policy } = at;
  let result: RunResult | undefined;
  let failure: unknown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writer: RunStreamWriter = SILENT_WRITER;
  // A run taken over by another process publishes nothing more: the stream is the new owner's. Where another process
  // could take it over, an event is published only while its lease is surely still this process's.
  const guarded = backends.shared;
  const frames = new MessageCoalescer((event, data) => {
    if (guarded ? !leaseMayBeLost(run, at.clock(), at.log) : !run.leaseLost) writer.publish(event, data);
  });
  try {
    writer = await run.writer;
    if ((backends.shared || backends.ownership.heartbeat) && !run.lease) {
      run.lease = at.leaseFor(run);
      await run.lease.hold();
    }
    if (run.remoteWait || (backends.shared && run.status === "pending")) {
      // Another process holds the thread: wait for its release (or for its lease to expire).
      await at.slots.acquire(threadId, run.runId, run.controller.signal);
      run.remoteWait = false;
      // It waited (its lease taken when it was queued): another process may have taken it over meanwhile.
      if (run.lease && !(await run.lease.confirm())) {
        run.leaseLost = true;
        throw new RunCancelledError("lease_lost");
      }
    }
    if (run.status !== "running") {
      run.status = "running";
      // Under its lease claim on shared backends: a stale owner's late `running` is refused (`run_stale_owner`).
      await host.stores.runs.update(run.runId, { status: "running", updatedAt: isoNow() }, recordFence(run, backends.shared));
    } else if (run.resumed) {
      await host.stores.runs.update(run.runId, { updatedAt: isoNow() }, recordFence(run, backends.shared));
    }
    if (policy.runTimeoutMs) {
      timer = setTimeout(() => {
        run.timedOut = true;
        run.controller.abort(new RunCancelledError("timeout"));
      }, policy.runTimeoutMs);
    }
    const agent = await host.buildAgent(request.settings);
    if (run.controller.signal.aborted) throw new RunCancelledError();
    await host.recorder.started({ runId: run.runId, threadId, userId: run.userId });
    // Events are pushed synchronously into the run's stream (no promise per event).
    const options: RunOptions = {
      threadId,
      runId: run.runId,
      checkpointId: request.checkpointId,
      context: request.context,
      // typed, parsed once at the edge: the run context takes them as they are
      settings: request.settings,
      configurable: request.configurable,
      metadata: { ...agentRunMetadata(agent), ...request.metadata },
      recursionLimit: request.recursionLimit,
      streamMode: request.streamModes,
      signal: run.controller.signal,
      onEvent: forwarder(run, frames, policy),
      onDurableWait: holdsOf(writer),
    };
    // Where leases are shared with other processes (they live beside the checkpoints), every checkpoint write of the
    // run carries its lease claim: a write after another process claimed the run is refused by the store itself.
    if (backends.shared && run.leaseEpoch !== undefined) options.fence = runFence(run, run.leaseEpoch, at.log);
    result = await agent.stream(request.input, options).result;
  } catch (err) {
    failure = err;
  } finally {
    frames.flush();
    if (timer) clearTimeout(timer);
  }
  return { result, failure };
}

/**
 * The run's `onDurableWait`: the stream holds its local subscribers' unsent frames while the run waits for a durable
 * checkpoint, so the frames before and after the wait share a network write (undefined: the writer takes no holds).
 */
function holdsOf(writer: RunStreamWriter): RunOptions["onDurableWait"] {
  return writer.durableWait?.bind(writer);
}

/** The run's `onEvent` (returned by a call, so the closure is not named at each run). */
function forwarder(run: LocalRun, frames: MessageCoalescer, policy: RunPolicy): NonNullable<RunOptions["onEvent"]> {
  const tap = run.request.onEvent;
  const subgraphs = run.request.subgraphs === true;
  const eventData = policy.eventData;
  return (ev) => {
    tap?.(ev);
    const ns = ev.ns ?? [];
    if (ns.length && !subgraphs) return;
    frames.push(ns.length ? [ev.mode, ...ns].join("|") : ev.mode, eventData ? eventData(ev.mode, ev.data) : ev.data);
  };
}
