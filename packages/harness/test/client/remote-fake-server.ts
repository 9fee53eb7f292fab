import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request the fake server saw. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A route: answers a request (may hold it open, write a stream, …). */
export type FakeRoute = (req: SeenRequest, res: http.ServerResponse, raw: http.IncomingMessage) => void | Promise<void>;

/** A local HTTP server on 127.0.0.1:0 answering with scripted routes (`"POST /api/threads"` → handler). */
export interface FakeServer {
  url: string;
  seen: SeenRequest[];
  routes: Map<string, FakeRoute>;
  close(): Promise<void>;
}

/** Start a fake server; unknown routes answer 404 `{"detail":"Not Found"}` as the gateway does. */
export async function startFakeServer(routes: Record<string, FakeRoute> = {}): Promise<FakeServer> {
  const seen: SeenRequest[] = [];
  const table = new Map(Object.entries(routes));
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on("data", (c: Buffer) => chunks.push(c));
    raw.on("end", () => {
      const url = new URL(raw.url ?? "/", "http://x");
      const req: SeenRequest = { method: raw.method ?? "GET", path: url.pathname + url.search, headers: raw.headers, body: Buffer.concat(chunks) };
      seen.push(req);
      const route = table.get(`${req.method} ${url.pathname}`);
      if (!route) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ detail: "Not Found" }));
        return;
      }
      void Promise.resolve(route(req, res, raw)).catch((err: unknown) => {
        res.destroy(err as Error);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    routes: table,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answer JSON. */
export function json(status: number, value: unknown, headers: Record<string, string> = {}): FakeRoute {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));
  };
}

/** One gateway SSE frame, as `formatFrame` writes it. */
export function frame(event: string, data: unknown, id?: string): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n${id ? `id: ${id}\n` : ""}\n`;
}

/** The SSE response headers of the gateway. */
export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
