import type { StreamMode } from "../runtime";
import { RemoteProtocolError } from "./remote-errors";
import type { SseEvent } from "./remote-sse";
import type { ClientStreamTranslator } from "./stream-translator";
import type { ClientStreamEvent } from "./types";

/** What a run's stream said besides its events: the ids from `metadata`, a failure from `error`, whether it ended. */
export interface RemoteRunOutcome {
  runId: string | undefined;
  /** The run's `error` event (`{message, name}`), if it sent one. */
  error: { message: string; name?: string } | undefined;
  /** True once `event: end` arrived (a stream cut short never sends it). */
  ended: boolean;
}

/** The gateway's SSE event names → the harness stream modes the translator reads (`messages-tuple` goes out as `messages`). */
const MODES: Record<string, StreamMode> = { values: "values", messages: "messages", custom: "custom" };

function parseData(ev: SseEvent): unknown {
  try {
    return JSON.parse(ev.data);
  } catch {
    throw new RemoteProtocolError(`The run stream sent an \`${ev.event}\` event whose data is not JSON`);
  }
}

/**
 * Turn a run's SSE stream (`POST /api/threads/{id}/runs/stream` with
 * `values`, `messages-tuple` and `custom`) into the embedded client's
 * events, through the same {@link ClientStreamTranslator}: the gateway's
 * frames carry the harness's own stream events (`messages` tuples, `values`
 * snapshots, `custom` payloads) as JSON, so the translation — deltas by
 * message id, each tool call and result once, usage counted once — is
 * exactly the embedded client's. Sub-graph events (`messages|ns…`) are
 * skipped as there. `metadata`, `error` and `end` fill `outcome`.
 */
export async function* translateRunStream(events: AsyncIterable<SseEvent>, translator: ClientStreamTranslator, outcome: RemoteRunOutcome): AsyncGenerator<ClientStreamEvent> {
  for await (const ev of events) {
    if (ev.event === "end") {
      outcome.ended = true;
      return;
    }
    const data = parseData(ev);
    if (ev.event === "metadata") {
      const runId = (data as { run_id?: unknown } | null)?.run_id;
      if (typeof runId === "string") outcome.runId = runId;
      continue;
    }
    if (ev.event === "error") {
      const d = (data ?? {}) as { message?: unknown; name?: unknown; error?: unknown };
      const message = typeof d.message === "string" ? d.message : typeof d.error === "string" ? d.error : "The run failed";
      outcome.error = { message, name: typeof d.name === "string" ? d.name : undefined };
      continue;
    }
    const [base, ...ns] = ev.event.split("|");
    const mode = MODES[base];
    if (!mode) continue;
    for (const out of translator.translate({ mode, ns, data })) yield out;
  }
}
