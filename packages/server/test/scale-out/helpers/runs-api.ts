/**
 * The few LangGraph-API calls the scale-out tests and the scale bench make
 * against a gateway process (`{base}/api`).
 */
import { openSse } from "./sse-client";
import type { SseStream } from "./sse-client";

/** A human message in the UI's wire shape. */
export function humanInput(text: string): Record<string, unknown> {
  return { messages: [{ type: "human", content: [{ type: "text", text }], additional_kwargs: {} }] };
}

async function json<T>(res: Response, what: string): Promise<T> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** POST /threads. */
export async function createThread(api: string): Promise<string> {
  const res = await fetch(`${api}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  return (await json<{ thread_id: string }>(res, "create thread")).thread_id;
}

/** POST /threads/{id}/runs/stream: create a run and read its stream. */
export function streamRun(api: string, threadId: string, text: string, extra: Record<string, unknown> = {}): Promise<SseStream> {
  return openSse(`${api}/threads/${threadId}/runs/stream`, { body: { input: humanInput(text), stream_mode: ["values", "messages-tuple"], ...extra } });
}

/** POST /threads/{id}/runs: create a background run; its record. */
export async function createRun(api: string, threadId: string, text: string, extra: Record<string, unknown> = {}): Promise<{ run_id: string; status: string }> {
  const res = await fetch(`${api}/threads/${threadId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: humanInput(text), stream_mode: ["values", "messages-tuple"], ...extra }),
  });
  return json(res, "create run");
}

/** GET /threads/{id}/runs/{run}/stream with an optional Last-Event-ID (join). */
export function joinRun(api: string, threadId: string, runId: string, lastEventId?: string): Promise<SseStream> {
  return openSse(`${api}/threads/${threadId}/runs/${runId}/stream`, { lastEventId });
}

/** GET /threads/{id}/runs/{run}. */
export async function getRun(api: string, threadId: string, runId: string): Promise<{ run_id: string; status: string; error?: string | null }> {
  return json(await fetch(`${api}/threads/${threadId}/runs/${runId}`), "get run");
}

/** POST /threads/{id}/runs/{run}/cancel. */
export async function cancelRun(api: string, threadId: string, runId: string, action: "interrupt" | "rollback" = "interrupt", wait = false): Promise<number> {
  const res = await fetch(`${api}/threads/${threadId}/runs/${runId}/cancel?action=${action}${wait ? "&wait=1" : ""}`, { method: "POST" });
  await res.arrayBuffer();
  return res.status;
}

/** GET /threads/{id}/state: the conversation's messages (the lead agent's system messages left out). */
export async function threadMessages(api: string, threadId: string): Promise<Array<{ type: string; content: unknown; tool_calls?: unknown[] }>> {
  const s = await json<{ values: { messages?: Array<{ type: string; content: unknown; tool_calls?: unknown[] }> } }>(await fetch(`${api}/threads/${threadId}/state`), "thread state");
  return (s.values.messages ?? []).filter((m) => m.type !== "system");
}

/**
 * Poll a thread's stored messages (as another process reads them) until `pred` holds (bounded). A step the
 * stream already showed is stored a moment later: only a tool with side effects waits for its commit first.
 */
export async function waitForMessages(
  api: string,
  threadId: string,
  pred: (messages: Awaited<ReturnType<typeof threadMessages>>) => boolean,
  attempts = 600,
): Promise<Awaited<ReturnType<typeof threadMessages>>> {
  let messages: Awaited<ReturnType<typeof threadMessages>> = [];
  for (let i = 0; i < attempts; i++) {
    messages = await threadMessages(api, threadId);
    if (pred(messages)) return messages;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`thread ${threadId} stayed at [${messages.map((m) => m.type).join(", ")}]`);
}

/** The run id a created stream announced in its `metadata` event. */
export async function runIdOf(stream: SseStream): Promise<string> {
  const meta = await stream.waitFor((f) => f.event === "metadata");
  return (meta.data as { run_id: string }).run_id;
}

/** Poll a run's record until `pred` holds (bounded; each probe is a real request). */
export async function waitForRun(api: string, threadId: string, runId: string, pred: (status: string) => boolean, attempts = 600): Promise<string> {
  let status = "";
  for (let i = 0; i < attempts; i++) {
    status = (await getRun(api, threadId, runId)).status;
    if (pred(status)) return status;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} stayed '${status}'`);
}
