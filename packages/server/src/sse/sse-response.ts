import type { SubscriberItem } from "./event-buffer";
import { formatFrame, HEARTBEAT_FRAME } from "./frame";

/** Options of {@link sseResponse}. */
export interface SseResponseOptions {
  /** Send `: heartbeat` after this many ms without a frame. */
  heartbeatMs: number;
  /** Extra headers (e.g. `Content-Location`). */
  headers?: Record<string, string>;
  /** Called once if the client goes away before the stream finished. */
  onDisconnect?: () => void;
  /** The request's abort signal (fires when the client disconnects). */
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

/**
 * Turn a subscription into an SSE `Response`. The producer is a function of
 * an AbortSignal that fires when the client disconnects.
 */
export function sseResponse(
  produce: (signal: AbortSignal) => AsyncIterable<SubscriberItem>,
  options: SseResponseOptions,
): Response {
  const encoder = new TextEncoder();
  const abort = new AbortController();
  let finished = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let lastWrite = Date.now();

  const disconnect = () => {
    if (finished) return;
    finished = true;
    if (timer) clearInterval(timer);
    abort.abort();
    options.onDisconnect?.();
  };
  options.requestSignal?.addEventListener("abort", disconnect, { once: true });

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Frames produced in the same tick are coalesced into one chunk (one socket write).
      let pending = "";
      let scheduled = false;
      const flush = (): void => {
        scheduled = false;
        if (!pending || finished) return;
        const text = pending;
        pending = "";
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          disconnect();
        }
      };
      const write = (text: string): boolean => {
        if (finished) return false;
        pending += text;
        lastWrite = Date.now();
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
        return true;
      };
      const tick = Math.max(5, Math.min(1000, Math.floor(options.heartbeatMs / 2)));
      timer = setInterval(() => {
        if (Date.now() - lastWrite >= options.heartbeatMs) write(HEARTBEAT_FRAME);
      }, tick);
      void (async () => {
        try {
          for await (const item of produce(abort.signal)) {
            if (item.kind === "event") {
              if (!write(formatFrame(item.event.event, item.event.data, item.event.id))) break;
            } else if (item.kind === "gap") {
              write(formatFrame("gap", item.data));
              break;
            } else {
              write(END_FRAME);
              break;
            }
          }
        } catch (err) {
          write(formatFrame("error", { message: "Stream failed", name: (err as Error)?.name ?? "Error" }));
          write(END_FRAME);
        } finally {
          if (timer) clearInterval(timer);
          options.requestSignal?.removeEventListener("abort", disconnect);
          if (!finished) {
            flush();
            finished = true;
            try {
              controller.close();
            } catch {
              /* already closed */
            }
          }
        }
      })();
    },
    cancel() {
      disconnect();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...(options.headers ?? {}) } });
}

/** An SSE response that only says the stream already ended. */
export function endedStreamResponse(headers?: Record<string, string>): Response {
  return new Response(END_FRAME, { status: 200, headers: { ...SSE_HEADERS, ...(headers ?? {}) } });
}
