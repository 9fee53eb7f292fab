/**
 * Long-thread phase of the gateway benchmark: one thread, `turns` streaming
 * runs one after another (instant model), timed from request to the end of
 * the SSE stream. Shows whether a turn costs more as the thread grows
 * (transcript writes, checkpoint loads, state frames) and how much the
 * database grows per turn.
 */
import { median } from "../lib";

/** What {@link longThread} measured. */
export interface LongThreadResult {
  turns: number;
  /** Median ms per turn over turns 6–15 and over the last 10 turns. */
  early_ms: number;
  late_ms: number;
  /** `late_ms / early_ms` with only incremental modes (`messages-tuple`, `updates`). */
  growth: number;
  /** Same with `values` too: every step re-sends the whole state, so this grows with the thread by design. */
  growth_with_values: number;
  /** Growth of the database per turn, in bytes (checkpoint deltas, transcript rows, run records, indexes). */
  db_bytes_per_turn: number;
}

async function timeTurns(url: string, headers: Record<string, string>, turns: number, modes: string[]): Promise<number[]> {
  const created = await fetch(`${url}/api/langgraph/threads`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
  const { thread_id: tid } = (await created.json()) as { thread_id: string };
  const times: number[] = [];
  for (let i = 0; i < turns; i++) {
    const body = JSON.stringify({
      input: { messages: [{ type: "human", content: [{ type: "text", text: `question ${i}` }], additional_kwargs: {} }] },
      stream_mode: modes,
    });
    const t0 = performance.now();
    const res = await fetch(`${url}/api/langgraph/threads/${tid}/runs/stream`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
    const text = await res.text();
    times.push(performance.now() - t0);
    if (res.status !== 200 || !text.endsWith("event: end\ndata: null\n\n") || text.includes("event: error")) {
      throw new Error(`long-thread turn ${i} failed: ${res.status}`);
    }
  }
  return times;
}

/**
 * Run the phase against a gateway (model latency must be 0). `dbBytes()`
 * gives the database's logical size (pages in use × page size).
 */
export async function longThread(url: string, headers: Record<string, string>, dbBytes: () => number, turns: number): Promise<LongThreadResult> {
  const before = dbBytes();
  const lean = await timeTurns(url, headers, turns, ["messages-tuple", "updates"]);
  const afterLean = dbBytes();
  const full = await timeTurns(url, headers, turns, ["values", "messages-tuple", "updates", "custom"]);
  const window = (xs: number[]) => ({ early: median(xs.slice(5, 15)), late: median(xs.slice(-10)) });
  const l = window(lean);
  const f = window(full);
  return {
    turns,
    early_ms: l.early,
    late_ms: l.late,
    growth: l.late / l.early,
    growth_with_values: f.late / f.early,
    db_bytes_per_turn: Math.max(0, afterLean - before) / turns,
  };
}
