import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { SubscriberItem } from "./event-buffer";
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
 */
export type SseSource = (push: (item: SubscriberItem) => void) => () => void;

/**
 * Drive a push subscription into a sink: frames produced in the same tick
 * are coalesced into one write, `: heartbeat` after `heartbeatMs` idle, and
 * the source is detached when the client disconnects. Returns the
 * disconnect function (for sink-level close events).
 */
function pumpSse(source: SseSource, options: SseResponseOptions, sink: SseSink): () => void {
  let finished = false;
  let ended = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let lastWrite = Date.now();
  let pending = "";
  let scheduled = false;
  let headersFlushed = false;
  let detach: (() => void) | undefined;

  const stop = (): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
    options.requestSignal?.removeEventListener("abort", disconnect);
    detach?.();
  };
  function disconnect(): void {
    if (finished) return;
    finished = true;
    stop();
    options.onDisconnect?.();
  }
  options.requestSignal?.addEventListener("abort", disconnect, { once: true });

  const flush = (): void => {
    scheduled = false;
    if (finished && !ended) return;
    if (pending) {
      headersFlushed = true;
      const text = pending;
      pending = "";
      try {
        sink.write(text);
      } catch {
        disconnect();
        return;
      }
    } else if (!headersFlushed) {
      headersFlushed = true;
      try {
        sink.flushHeaders();
      } catch {
        disconnect();
        return;
      }
    }
    if (ended) {
      ended = false;
      try {
        sink.end();
      } catch {
        /* already closed */
      }
    }
  };
  const schedule = (): void => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const write = (text: string): void => {
    if (finished) return;
    pending += text;
    lastWrite = Date.now();
    schedule();
  };
  /** Last frame written: detach, then send what is pending and end the response in the next flush. */
  const finish = (last: string): void => {
    if (finished) return;
    write(last);
    finished = true;
    ended = true;
    stop();
  };
  // Headers go out promptly even when the first event is still to come.
  schedule();
  const tick = Math.max(5, Math.min(1000, Math.floor(options.heartbeatMs / 2)));
  timer = setInterval(() => {
    if (Date.now() - lastWrite >= options.heartbeatMs) write(HEARTBEAT_FRAME);
  }, tick);
  const push = (item: SubscriberItem): void => {
    if (finished) return;
    try {
      if (item.kind === "event") write(formatFrame(item.event.event, item.event.data, item.event.id));
      else if (item.kind === "gap") finish(formatFrame("gap", item.data));
      else finish(END_FRAME);
    } catch (err) {
      finish(formatFrame("error", { message: "Stream failed", name: (err as Error)?.name ?? "Error" }) + END_FRAME);
    }
  };
  try {
    detach = source(push);
  } catch (err) {
    finish(formatFrame("error", { message: "Stream failed", name: (err as Error)?.name ?? "Error" }) + END_FRAME);
  }
  if (finished) detach?.();
  return disconnect;
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
  const disconnect = pumpSse(source, options, {
    write: (text) => {
      if (outgoing.destroyed || outgoing.writableEnded) throw new Error("response closed");
      outgoing.write(text);
    },
    flushHeaders: () => outgoing.flushHeaders(),
    end: () => outgoing.end(),
  });
  outgoing.once("close", () => {
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
 */
export function sendSse(c: Context, source: SseSource, options: SseResponseOptions): Response {
  const outgoing = nodeResponse(c);
  if (!outgoing) return sseResponse(source, { ...options, requestSignal: options.requestSignal ?? c.req.raw.signal });
  sseToNode(outgoing, source, options);
  return RESPONSE_ALREADY_SENT;
}

/** An SSE response that only says the stream already ended. */
export function endedStreamResponse(headers?: Record<string, string>): Response {
  return new Response(END_FRAME, { status: 200, headers: { ...SSE_HEADERS, ...(headers ?? {}) } });
}
