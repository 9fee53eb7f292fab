import http from "node:http";
import type { AddressInfo } from "node:net";

/** A request a double received. */
export interface RecordedWebRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it was JSON. */
  json?: unknown;
}

/** A failure the double returns instead of its normal answer. */
export type WebDoubleFault =
  | { status: number; body?: string; contentType?: string; retryAfter?: number | string }
  | { hang: true }
  | { badJson: true }
  | { reset: true };

/** What a route handler returns. */
export interface DoubleReply {
  status?: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

/** A route handler: return undefined for 404. */
export type DoubleHandler = (req: RecordedWebRequest) => DoubleReply | undefined | Promise<DoubleReply | undefined>;

/** A running double on 127.0.0.1. */
export interface WebDouble {
  /** `http://127.0.0.1:<port>` (use it as the provider's `base_url`). */
  readonly url: string;
  readonly requests: RecordedWebRequest[];
  /** Answer the next `times` requests with `fault` (default once). */
  fail(fault: WebDoubleFault, times?: number): void;
  close(): Promise<void>;
}

/** JSON reply helper. */
export function json(value: unknown, status = 200, headers: Record<string, string> = {}): DoubleReply {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(value) };
}

/** Start a double serving `handler` on 127.0.0.1 (random port). */
export async function startDoubleServer(handler: DoubleHandler): Promise<WebDouble> {
  const requests: RecordedWebRequest[] = [];
  const faults: WebDoubleFault[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const u = new URL(req.url ?? "/", "http://127.0.0.1");
      const body = Buffer.concat(chunks).toString("utf8");
      let parsed: unknown;
      try {
        parsed = body ? JSON.parse(body) : undefined;
      } catch {
        parsed = undefined;
      }
      const rec: RecordedWebRequest = { method: req.method ?? "GET", path: u.pathname, query: Object.fromEntries(u.searchParams), headers: req.headers, body, json: parsed };
      requests.push(rec);
      const fault = faults.shift();
      if (fault) {
        if ("hang" in fault) {
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        }
        if ("reset" in fault) {
          req.socket.destroy();
          return;
        }
        if ("badJson" in fault) {
          res.writeHead(200, { "content-type": "application/json" }).end("{\"results\": [");
          return;
        }
        const headers: Record<string, string> = { "content-type": fault.contentType ?? "application/json" };
        if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
        res.writeHead(fault.status, headers).end(fault.body ?? JSON.stringify({ error: `HTTP ${fault.status}` }));
        return;
      }
      try {
        const reply = await handler(rec);
        if (!reply) {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
          return;
        }
        res.writeHead(reply.status ?? 200, reply.headers ?? {}).end(reply.body);
      } catch (err) {
        res.writeHead(500, { "content-type": "text/plain" }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fail(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault);
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A route of {@link startPageServer}: a page, a redirect or a handler. */
export type PageRoute = DoubleReply | { redirect: string; status?: number } | DoubleHandler;

/**
 * A plain web server for fetch tests: `routes` maps a path (with query) to
 * a page, a redirect or a handler. Unknown paths answer 404.
 */
export function startPageServer(routes: Record<string, PageRoute>): Promise<WebDouble> {
  return startDoubleServer(async (req) => {
    const qs = new URLSearchParams(req.query).toString();
    const route = routes[qs ? `${req.path}?${qs}` : req.path] ?? routes[req.path];
    if (!route) return undefined;
    if (typeof route === "function") return route(req);
    if ("redirect" in route) return { status: route.status ?? 302, headers: { location: route.redirect }, body: "" };
    return route;
  });
}
