/**
 * A streaming SSE reader for the scale-out tests and the scale bench: it
 * reads a run's stream from one gateway process, keeps every frame with its
 * id (for `Last-Event-ID` reconnects to another process), and lets a caller
 * wait for a frame instead of sleeping.
 */

/** One SSE frame as received. */
export interface SseFrame {
  event: string;
  data: unknown;
  /** The frame's `id:` (the stream entry id), when it had one. */
  id?: string;
  /** `performance.now()` when it arrived. */
  at: number;
}

/** Options of {@link openSse}. */
export interface OpenSseOptions {
  method?: "GET" | "POST";
  body?: unknown;
  lastEventId?: string;
  headers?: Record<string, string>;
}

/** A stream being read. */
export interface SseStream {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Frames so far, in order. */
  readonly frames: SseFrame[];
  /** `Content-Location` of the answer (names the run of a created stream). */
  readonly location: string | null;
  /** Resolves with the first frame (at or after `from`) matching `pred`; rejects when the stream ends first or after `timeoutMs`. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs?: number, from?: number): Promise<SseFrame>;
  /** Settles when the server closed the stream (or it was aborted or failed); resolves with the frames. */
  readonly done: Promise<SseFrame[]>;
  /** True once the stream closed. */
  readonly closed: boolean;
  /** Why the stream stopped early (a connection reset when its process was killed), if it did. */
  readonly failure: Error | undefined;
  /** Stop reading (closes the connection). */
  abort(): void;
}

function parseFrame(block: string): Omit<SseFrame, "at"> | undefined {
  let event = "message";
  let data = "";
  let id: string | undefined;
  let any = false;
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data = data ? `${data}\n${value}` : value;
    else if (field === "id") id = value;
    else continue;
    any = true;
  }
  if (!any) return undefined;
  let parsed: unknown = data;
  try {
    parsed = data === "" ? null : JSON.parse(data);
  } catch {
    // not JSON: kept as text
  }
  return { event, data: parsed, id };
}

/** Open an SSE stream at `url` and read it in the background. */
export async function openSse(url: string, options: OpenSseOptions = {}): Promise<SseStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.lastEventId) headers["last-event-id"] = options.lastEventId;
  const res = await fetch(url, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  let closed = false;
  let failure: Error | undefined;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const done = (async () => {
    if (!res.body) return frames;
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
        let cut: number;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const frame = parseFrame(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (frame) frames.push({ ...frame, at: performance.now() });
        }
        wake();
      }
    } catch (err) {
      if (!controller.signal.aborted) failure = err as Error;
    } finally {
      closed = true;
      wake();
    }
    return frames;
  })();
  return {
    status: res.status,
    frames,
    location: res.headers.get("content-location"),
    get closed() {
      return closed;
    },
    get failure() {
      return failure;
    },
    done,
    abort: () => controller.abort(),
    waitFor(pred, timeoutMs = 30_000, from = 0) {
      return new Promise<SseFrame>((resolve, reject) => {
        const finish = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        const check = () => {
          for (let i = from; i < frames.length; i++) if (pred(frames[i]!)) return finish(() => resolve(frames[i]!));
          if (closed) finish(() => reject(new Error(`stream ${url} closed without the awaited frame; got ${frames.map((f) => f.event).join(",")}${failure ? ` (${failure.message})` : ""}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no awaited frame from ${url} within ${timeoutMs} ms; got ${frames.map((f) => f.event).join(",")}`))), timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** The last frame id of `frames` (for a `Last-Event-ID` reconnect). */
export function lastId(frames: readonly SseFrame[]): string | undefined {
  for (let i = frames.length - 1; i >= 0; i--) if (frames[i]!.id) return frames[i]!.id;
  return undefined;
}
