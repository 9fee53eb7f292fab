import type { RunStreamWriter, StreamBridge } from "./backend-types";

/**
 * Open a run's stream writer. A resumed stream goes on after what its
 * readers already saw; a new one starts with the run's `metadata` event,
 * published once `after` settled (on shared backends the run's record: a
 * reader of another process that is given the run's id finds it). Appends
 * carry the run's lease epoch, read per batch.
 */
export function openRunWriter(
  bridge: StreamBridge,
  run: { runId: string; threadId: string },
  resume: boolean,
  epoch: () => number | undefined,
  after?: Promise<void>,
): Promise<RunStreamWriter> {
  return bridge.writer(run.runId, { resume, epoch }).then(async (writer) => {
    if (resume) return writer;
    await after?.catch(() => undefined);
    writer.publish("metadata", { run_id: run.runId, thread_id: run.threadId });
    return writer;
  });
}

/**
 * The stream of a run that streams nothing (its caller takes its events
 * from `onEvent`) on shared backends: only its `error` and its end marker,
 * so a client of another process that joins it (its record says it runs)
 * is told when and how it ended.
 */
export function openEndOnlyWriter(bridge: StreamBridge, runId: string, epoch: () => number | undefined): Promise<RunStreamWriter> {
  return bridge.writer(runId, { resume: false, epoch }).then((w) => ({
    publish: (event: string, data: unknown) => (event === "error" ? w.publish(event, data) : ""),
    end: () => w.end(),
    flush: () => w.flush(),
    ...(w.abandon ? { abandon: (message: string) => w.abandon!(message) } : {}),
  }));
}
