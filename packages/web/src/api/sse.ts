/**
 * A `text/event-stream` reader for the run streams: frames out of a fetch
 * body, with `data` parsed as JSON. The UI's own, so the browser bundle does
 * not carry a general-purpose SDK for the few endpoints it calls.
 */
import type { WireStreamPart } from "@deerflow-ts/harness/wire";

/**
 * Parse an SSE body into parts. Lines end with LF, CRLF or CR; `data` lines
 * are joined with `\n`; comment lines (the gateway's `: heartbeat`) and
 * frames without data are skipped; the frame id sticks until the next one,
 * as the event-stream format says. A frame cut off by the end of the body is
 * dropped (the reconnect resumes after the last complete frame).
 */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<WireStreamPart> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let at: number;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      while ((at = buffer.search(/\r\n|\r(?!$)|\n/)) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + (buffer.startsWith("\r\n", at) ? 2 : 1));
        if (line === "") {
          if (data.length) yield { event: event || "message", data: parseData(data.join("\n")), ...(id ? { id } : {}) };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? "" : line.slice(colon + 1);
        const v = raw.startsWith(" ") ? raw.slice(1) : raw;
        if (field === "data") data.push(v);
        else if (field === "event") event = v;
        else if (field === "id" && !v.includes("\0")) id = v;
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Also when the consumer stopped early: the connection is closed, not left open.
    void reader.cancel().catch(() => undefined);
  }
}

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
