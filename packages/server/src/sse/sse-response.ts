import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { StreamItem, StreamListener } from "@deerflow-ts/harness";
import { formatFrame, HEARTBEAT_FRAME } from "./frame";

/** Options of {@link sseResponse} and {@link sendSse}. */
export interface SseResponseOptions {
  /** Send `: heartbeat` after this many ms without a frame. */
  heartbeatMs: number;
  /** Extra headers (e.g. `Content-Location`). */
  headers?: Record<string, string>;
  /** Called once if the client goes away before the stream finished. */
  onDisconnect?: () => void;
  /**
   * Bytes a client may leave unread on a Node response (default
   * {@link DEFAULT_SSE_MAX_BACKLOG_BYTES}): while more than this waits for
   * it, the client must read something every {@link SSE_STALL_MS}, or it is
   * disconnected, instead of the process holding everything the run writes
   * for as long as the socket stays open.
   */
  maxBacklogBytes?: number;
  /** Called with the unread bytes when a client is disconnected for reading nothing (for the log). */
  onStalled?: (unreadBytes: number) => void;
  /**
   * The request's abort signal (fires when the client disconnects). Set by
   * {@link sendSse} for Web-stream responses only: on a Node response the
   * socket's `close` event says the same without a signal per request.
   */
  requestSignal?: AbortSignal;
}

/** The SSE response headers of the contract. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/**
 * Default of {@link SseResponseOptions.maxBacklogBytes}: 16 MiB unread by
 * the client. Far above what a reading client lags behind (a few frames),
 * and a client that was cut off resumes with `Last-Event-ID`.
 */
export const DEFAULT_SSE_MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * How long a client over the backlog may read nothing at all (ms). A slow
 * client that reads keeps its stream; one that reads nothing is let go. Its
 * progress is what left the buffer, so a burst the client is still reading
 * never counts against it.
 */
export const SSE_STALL_MS = 5000;

/** `event: end` with `data: null` (no id). */
export const END_FRAME = "event: end\ndata: null\n\n";

/** Where the pump writes: a Web stream controller or a Node response. */
interface SseSink {
  /** Write one coalesced chunk; throws when the connection is gone. */
  write(text: string): void;
  /** Nothing pending at the first flush: send the headers on their own. */
  flushHeaders(): void;
  /** End the response. */
  end(): void;
}

/**
 * Attach to an event source: call `push` for every item (synchronously is
 * fine, also during the call itself) and return a function that detaches.
 * A run's stream also calls `push.onHold` (see {@link SsePump}).
 */
export type SseSource = (push: StreamListener) => () => void;

/**
 * One heartbeat clock per tick length for every open stream (instead of an
 * interval timer per response): each tick asks every stream on it whether it
 * has been idle for its heartbeat interval.
 */
const heartbeatClocks = new Map<number, { timer: ReturnType<typeof setInterval>; pumps: Set<SsePump> }>();

function joinClock(tick: number, pump: SsePump): void {
  let clock = heartbeatClocks.get(tick);
  if (!clock) {
    const pumps = new Set<SsePump>();
    const timer = setInterval(() => {
      const now = Date.now();
      for (const p of pumps) p.beat(now);
    }, tick);
    clock = { timer, pumps };
    heartbeatClocks.set(tick, clock);
  }
  clock.pumps.add(pump);
}

function leaveClock(tick: number, pump: SsePump): void {
  const clock = heartbeatClocks.get(tick);
  if (!clock || !clock.pumps.delete(pump) || clock.pumps.size) return;
  clearInterval(clock.timer);
  heartbeatClocks.delete(tick);
}

/**
 * Drives a push subscription into a sink: frames produced in the same tick
 * are coalesced into one write, `: heartbeat` after `heartbeatMs` idle, and
 * the source is detached when the client disconnects. A class rather than
 * closures: one is made per streaming response.
 *
 * While the run holds its stream (it waits for a durable checkpoint before a
 * tool with side effects, or before it ends) the frames not sent yet wait
 * too, and go out with those the run produces right after the wait: the
 * model step and the tool step that follows it, or the last step and `end`,
 * in one write, as when nothing waited between them. Never the first write
 * (headers and first frames go out at once), never longer than the next tick
 * of the heartbeat clock (a commit that takes that long does not keep frames
 * from the client), and no timer of its own.
 */
class SsePump {
  private finished = false;
  private ended = false;
  private lastWrite = Date.now();
  private pending = "";
  private scheduled = false;
  private headersFlushed = false;
  /** The run holds its stream: {@link flush} keeps what is pending. */
  private held = false;
  private detach: (() => void) | undefined;
  private readonly tick: number;
  // Bound once (bound methods, not arrow fields: the TypeScript loader names every arrow field per instance).
  /** The source calls it for every item, and its `onHold` when the run holds its stream. */
  readonly push: StreamListener = Object.assign(this.onItem.bind(this), { onHold: this.onHold.bind(this) });
  /** The sink's close events and the request signal call it. */
  readonly disconnect: () => void = this.onDisconnect.bind(this);
  private readonly flushBound: () => void = this.flush.bind(this);

  constructor(
    source: SseSource,
    private readonly options: SseResponseOptions,
    private readonly sink: SseSink,
  ) {
    options.requestSignal?.addEventListener("abort", this.disconnect, { once: true });
    // Headers go out promptly even when the first event is still to come.
    this.schedule();
    this.tick = Math.max(5, Math.min(1000, Math.floor(options.heartbeatMs / 2)));
    joinClock(this.tick, this);
    try {
      this.detach = source(this.push);
    } catch (err) {
      this.finish(formatFrame("error", { message: "Stream failed", name: (err as Error)?.name ?? "Error" }) + END_FRAME);
    }
    if (this.finished) this.detach?.();
  }

  /** Heartbeat check (called by the shared clock); also the bound of a hold. */
  beat(now: number): void {
    if (this.held) this.onHold(false);
    if (now - this.lastWrite >= this.options.heartbeatMs) this.write(HEARTBEAT_FRAME);
  }

  private onHold(held: boolean): void {
    if (held) {
      this.held = true;
      return;
    }
    if (!this.held) return;
    this.held = false;
    if (this.pending) this.schedule();
  }

  private stop(): void {
    leaveClock(this.tick, this);
    this.options.requestSignal?.removeEventListener("abort", this.disconnect);
    this.detach?.();
  }

  private onDisconnect(): void {
    if (this.finished) return;
    this.finished = true;
    this.stop();
    this.options.onDisconnect?.();
  }

  private flush(): void {
    this.scheduled = false;
    if (this.finished && !this.ended) return;
    // Held: the release schedules the next flush. The last frame is never held.
    if (this.held && this.headersFlushed && !this.ended) return;
    if (this.pending) {
      this.headersFlushed = true;
      const text = this.pending;
      this.pending = "";
      try {
        this.sink.write(text);
      } catch {
        this.onDisconnect();
        return;
      }
    } else if (!this.headersFlushed) {
      this.headersFlushed = true;
      try {
        this.sink.flushHeaders();
      } catch {
        this.onDisconnect();
        return;
      }
    }
    if (this.ended) {
      this.ended = false;
      try {
        this.sink.end();
      } catch {
        /* already closed */
      }
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flushBound);
  }

  private write(text: string): void {
    if (this.finished) return;
    this.pending += text;
    this.lastWrite = Date.now();
    this.schedule();
  }

  /** Last frame written: detach, then send what is pending and end the response in the next flush. */
  private finish(last: string): void {
    if (this.finished) return;
    this.write(last);
    this.finished = true;
    this.ended = true;
    this.stop();
  }

  private onItem(item: StreamItem): void {
    if (this.finished) return;
    try {
      if (item.kind === "event") this.write(formatFrame(item.event, item.data, item.id));
      else if (item.kind === "gap") this.finish(formatFrame("gap", item.data));
      else this.finish(END_FRAME);
    } catch (err) {
      this.finish(formatFrame("error", { message: "Stream failed", name: (err as Error)?.name ?? "Error" }) + END_FRAME);
    }
  }
}

/** Start pumping `source` into `sink`; returns the disconnect function (for sink-level close events). */
function pumpSse(source: SseSource, options: SseResponseOptions, sink: SseSink): () => void {
  return new SsePump(source, options, sink).disconnect;
}

/**
 * Turn a subscription into an SSE `Response` (Web streams). Used when the
 * app runs without a Node response to write to (e.g. `app.request()`).
 */
export function sseResponse(source: SseSource, options: SseResponseOptions): Response {
  const encoder = new TextEncoder();
  let disconnect: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      disconnect = pumpSse(source, options, {
        write: (text) => controller.enqueue(encoder.encode(text)),
        flushHeaders: () => {},
        end: () => controller.close(),
      });
    },
    cancel() {
      disconnect?.();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...(options.headers ?? {}) } });
}

/**
 * Stream SSE straight into a Node `ServerResponse`: one `write` per
 * coalesced chunk, no Web-stream machinery in between.
 */
export function sseToNode(outgoing: ServerResponse, source: SseSource, options: SseResponseOptions): void {
  outgoing.writeHead(200, { ...SSE_HEADERS, ...(options.headers ?? {}) });
  const maxBacklog = options.maxBacklogBytes ?? DEFAULT_SSE_MAX_BACKLOG_BYTES;
  // Only while over the backlog: the buffered bytes at the last check and what was written since.
  let watch: ReturnType<typeof setTimeout> | undefined;
  let backlogAtCheck = 0;
  let writtenSince = 0;
  const stalled = options.onStalled;
  const check = () => {
    watch = undefined;
    if (outgoing.destroyed) return;
    const backlog = outgoing.writableLength;
    if (backlog <= maxBacklog) return;
    if (backlogAtCheck + writtenSince - backlog <= 0) {
      // Nothing left the buffer for a whole interval: the client does not read. Let it go rather than hold the run for it.
      stalled?.(backlog);
      outgoing.destroy();
      return;
    }
    backlogAtCheck = backlog;
    writtenSince = 0;
    watch = setTimeout(check, SSE_STALL_MS);
    watch.unref?.();
  };
  const disconnect = pumpSse(source, options, {
    write: (text) => {
      if (outgoing.destroyed || outgoing.writableEnded) throw new Error("response closed");
      outgoing.write(text);
      if (watch) writtenSince += Buffer.byteLength(text);
      else if (outgoing.writableLength > maxBacklog) {
        backlogAtCheck = outgoing.writableLength;
        writtenSince = 0;
        watch = setTimeout(check, SSE_STALL_MS);
        watch.unref?.();
      }
    },
    flushHeaders: () => outgoing.flushHeaders(),
    end: () => outgoing.end(),
  });
  outgoing.once("close", () => {
    if (watch) clearTimeout(watch);
    if (!outgoing.writableFinished) disconnect();
  });
  outgoing.once("error", disconnect);
}

/** The Node response behind a Hono context, when served by `@hono/node-server`. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (!outgoing || typeof outgoing.writeHead !== "function" || outgoing.headersSent) return undefined;
  return outgoing;
}

/**
 * Send an SSE stream for a route: directly on the Node response when there
 * is one (cheapest per chunk), otherwise as a Web-stream `Response`.
 *
 * On the Node path the response is started on the next turn of the event
 * loop, not inside the request: a burst of run requests then reaches its
 * model calls first, and the responses start right after (the source is a
 * replay buffer, so nothing published in between is missed; the first
 * frames would only have been written on that turn anyway).
 */
export function sendSse(c: Context, source: SseSource, options: SseResponseOptions): Response {
  const outgoing = nodeResponse(c);
  if (!outgoing) return sseResponse(source, { ...options, requestSignal: options.requestSignal ?? c.req.raw.signal });
  setImmediate(() => {
    // The client may have gone in the meantime: nothing to stream to.
    if (outgoing.destroyed || outgoing.writableEnded) options.onDisconnect?.();
    else sseToNode(outgoing, source, options);
  });
  return RESPONSE_ALREADY_SENT;
}

/** An SSE response that only says the stream already ended. */
export function endedStreamResponse(headers?: Record<string, string>): Response {
  return new Response(END_FRAME, { status: 200, headers: { ...SSE_HEADERS, ...(headers ?? {}) } });
}
