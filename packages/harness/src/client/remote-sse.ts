import { RemoteProtocolError } from "./remote-errors";

/** One dispatched server-sent event (comments and heartbeats are not events). */
export interface SseEvent {
  /** The `event:` field (`message` when the frame had none). */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream (the gateway's `{epoch_ms}-{seq}`), if any. */
  id?: string;
}

/** Options of {@link readSseEvents}. */
export interface ReadSseOptions {
  /** Called before each read of the body: the stream is now waiting for the server (an idle timer starts here). */
  onWait?: () => void;
  /** Called for every chunk received, heartbeats included (and the idle timer stops: consumer time is not silence). */
  onChunk?: () => void;
  /**
   * Largest event accepted, in characters. A `values` frame holds a whole
   * conversation, so the bound is generous; it exists so that a server that
   * never ends a line cannot grow this buffer without limit.
   */
  maxEventChars?: number;
}

const DEFAULT_MAX_EVENT_CHARS = 256 * 1024 * 1024;
const LINE_BREAK = /[\r\n]/g;

/**
 * Parse a `text/event-stream` body into events, following the HTML
 * standard's rules: UTF-8 decoded across chunk boundaries, a leading BOM
 * dropped, lines ended by CRLF, LF or CR (a CR at the end of a chunk waits
 * for the next one), one optional space after the colon, `data` lines
 * joined, comment lines (`: heartbeat`) skipped, an `id` holding NUL
 * ignored, and an event without `data` not dispatched. An event the
 * stream ends in the middle of is dropped, as a browser drops it.
 */
export async function* readSseEvents(body: ReadableStream<Uint8Array>, options: ReadSseOptions = {}): AsyncGenerator<SseEvent> {
  const maxChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  const decoder = new TextDecoder("utf-8");
  const reader = body.getReader();
  let buffer = "";
  let scanFrom = 0;
  let first = true;
  let eventName = "";
  let data: string[] = [];
  let dataChars = 0;
  let lastId: string | undefined;

  /** Apply one line; returns an event when the line was the blank one ending it. */
  const line = (text: string): SseEvent | undefined => {
    if (text === "") {
      const name = eventName || "message";
      const hadData = data.length > 0;
      const joined = data.join("\n");
      eventName = "";
      data = [];
      dataChars = 0;
      if (!hadData) return undefined;
      return lastId === undefined ? { event: name, data: joined } : { event: name, data: joined, id: lastId };
    }
    if (text.startsWith(":")) return undefined;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      data.push(value);
      dataChars += value.length + 1;
      if (dataChars > maxChars) throw new RemoteProtocolError(`A server-sent event is larger than ${maxChars} characters`);
    } else if (field === "event") eventName = value;
    else if (field === "id" && !value.includes("\0")) lastId = value;
    // `retry` and unknown fields are ignored: this reader never reconnects on its own.
    return undefined;
  };

  try {
    for (;;) {
      options.onWait?.();
      const { done, value } = await reader.read();
      if (done) break;
      options.onChunk?.();
      let text = decoder.decode(value, { stream: true });
      if (first && text.length) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      buffer += text;
      for (;;) {
        LINE_BREAK.lastIndex = scanFrom;
        const m = LINE_BREAK.exec(buffer);
        if (!m) {
          scanFrom = buffer.length;
          if (buffer.length > maxChars) throw new RemoteProtocolError(`A server-sent event line is longer than ${maxChars} characters`);
          break;
        }
        const at = m.index;
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (buffer[at] === "\r" && at === buffer.length - 1) {
          scanFrom = at;
          break;
        }
        const width = buffer[at] === "\r" && buffer[at + 1] === "\n" ? 2 : 1;
        const ev = line(buffer.slice(0, at));
        buffer = buffer.slice(at + width);
        scanFrom = 0;
        if (ev) yield ev;
      }
    }
    // A CR held back at the end still ended its line (a blank one dispatches); an unterminated last event is dropped.
    const tail = buffer + decoder.decode();
    if (tail.endsWith("\r")) {
      const ev = line(tail.slice(0, -1));
      if (ev) yield ev;
    }
  } finally {
    // Stopping early (the consumer broke out, or an error) closes the connection: the server sees the disconnect.
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
