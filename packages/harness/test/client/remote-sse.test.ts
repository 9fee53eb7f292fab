import { describe, expect, it } from "vitest";
import { readSseEvents, RemoteProtocolError } from "../../src";
import type { SseEvent } from "../../src";

/** A body that delivers `parts` one chunk each (strings as UTF-8, or raw bytes). */
function body(parts: Array<string | Uint8Array>, onCancel?: () => void): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= parts.length) return controller.close();
      const p = parts[i++];
      controller.enqueue(typeof p === "string" ? enc.encode(p) : p);
    },
    cancel() {
      onCancel?.();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of readSseEvents(stream)) out.push(ev);
  return out;
}

/** Every single-byte split of `text`. */
function bytewise(text: string): Uint8Array[] {
  return [...new TextEncoder().encode(text)].map((b) => Uint8Array.of(b));
}

// The gateway's own framing (formatFrame / HEARTBEAT_FRAME / END_FRAME), with non-ASCII text in the payload.
const GATEWAY_TEXT =
  'event: metadata\ndata: {"run_id":"r1","thread_id":"t1"}\nid: 1-0\n\n' +
  ": heartbeat\n\n" +
  'event: messages\ndata: [{"type":"AIMessageChunk","id":"a1","content":"Grüße, 世界 🌍"},{}]\nid: 1-1\n\n' +
  "event: end\ndata: null\n\n";

const GATEWAY_EVENTS: SseEvent[] = [
  { event: "metadata", data: '{"run_id":"r1","thread_id":"t1"}', id: "1-0" },
  { event: "messages", data: '[{"type":"AIMessageChunk","id":"a1","content":"Grüße, 世界 🌍"},{}]', id: "1-1" },
  { event: "end", data: "null", id: "1-1" },
];

describe("readSseEvents", () => {
  it("parses the gateway's frames whole, and split at every byte (UTF-8 sequences cut in half included)", async () => {
    expect(await collect(body([GATEWAY_TEXT]))).toEqual(GATEWAY_EVENTS);
    expect(await collect(body(bytewise(GATEWAY_TEXT)))).toEqual(GATEWAY_EVENTS);
  });

  it("accepts CRLF, CR and LF line ends, a CR at a chunk's end followed by LF, and a leading BOM", async () => {
    const crlf = GATEWAY_TEXT.replace(/\n/g, "\r\n");
    const cr = GATEWAY_TEXT.replace(/\n/g, "\r");
    expect(await collect(body(["\uFEFF" + crlf]))).toEqual(GATEWAY_EVENTS);
    expect(await collect(body(bytewise(crlf)))).toEqual(GATEWAY_EVENTS);
    expect(await collect(body([cr]))).toEqual(GATEWAY_EVENTS);
    // "\r" ends the chunk: it must not end a line twice when "\n" starts the next one
    expect(await collect(body(["event: a\r", "\ndata: 1\r", "\n\r", "\n"]))).toEqual([{ event: "a", data: "1" }]);
  });

  it("joins data lines, strips one space after the colon, skips comments, ignores an id with NUL and events without data", async () => {
    const text = "data:x\ndata:  y\n: a comment\ndata\n\nevent: empty\n\nid: bad\0id\nevent: z\ndata: 1\n\n";
    expect(await collect(body([text]))).toEqual([
      { event: "message", data: "x\n y\n" },
      { event: "z", data: "1" },
    ]);
  });

  it("drops an event the stream ends in the middle of", async () => {
    expect(await collect(body(["event: values\ndata: {}\n\nevent: values\ndata: {\"cut"]))).toEqual([{ event: "values", data: "{}" }]);
    // a CR held back at the very end still ends the blank line
    expect(await collect(body(["data: last\r\r"]))).toEqual([{ event: "message", data: "last" }]);
  });

  it("refuses an event larger than the bound instead of buffering without end", async () => {
    const big = "data: " + "x".repeat(200) + "\n\n";
    await expect(async () => {
      for await (const _ of readSseEvents(body([big]), { maxEventChars: 100 })) void _;
    }).rejects.toBeInstanceOf(RemoteProtocolError);
    // a line that never ends is refused as well
    await expect(async () => {
      for await (const _ of readSseEvents(body(["data: ", "y".repeat(150)]), { maxEventChars: 100 })) void _;
    }).rejects.toThrow(/longer than 100/);
  });

  it("stopping early cancels the body (the connection closes), and every chunk is reported", async () => {
    let cancelled = false;
    let chunks = 0;
    const stream = body(["data: 1\n\n", ": heartbeat\n\n", "data: 2\n\n"], () => (cancelled = true));
    for await (const ev of readSseEvents(stream, { onChunk: () => chunks++ })) {
      expect(ev.data).toBe("1");
      break;
    }
    expect(cancelled).toBe(true);
    expect(chunks).toBe(1);
  });
});
