import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as a double's handler sees it: a web `Request` (JSON and multipart bodies parse as usual). */
export type DoubleHandler = (req: Request, res: ServerResponse) => Promise<void> | void;

/** A running local HTTP server of a protocol double. */
export interface HttpDouble {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Answer JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Start a server on 127.0.0.1 (a free port) that turns each request into a web `Request` for `handler`. */
export async function startHttpDouble(handler: DoubleHandler): Promise<HttpDouble> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void (async () => {
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, body: body as BodyInit | undefined });
      await handler(request, res);
    })().catch((err: unknown) => sendJson(res, 500, { ok: false, description: String((err as Error).message ?? err) }));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Waits for recorded items matching a predicate (checked on each new item: no polling). */
export class Recorder<T> {
  readonly items: T[] = [];
  private waiters: Array<{ pred: (items: T[]) => boolean; resolve: () => void }> = [];

  add(item: T): void {
    this.items.push(item);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(this.items)) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `pred(items)` holds (at once if it already does). */
  until(pred: (items: T[]) => boolean): Promise<void> {
    if (pred(this.items)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
}
