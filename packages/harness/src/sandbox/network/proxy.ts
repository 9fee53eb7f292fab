import { chmod, chown, rm } from "node:fs/promises";
import http from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { ResolvedAddress } from "../../web-research/ssrf-guard";
import type { EgressDecision, EgressPolicy, EgressRefused } from "./policy";

/** Options of {@link EgressProxy}. */
export interface EgressProxyOptions {
  policy: EgressPolicy;
  /** Unix socket the proxy listens on (bind-mounted into the sandbox). */
  socketPath: string;
  /** Owner of the socket (the sandbox uid when the service is root); mode 0600 either way. */
  socketOwner?: { uid: number; gid: number };
  /** Connections served at once; more are closed on accept (default 64). */
  maxConnections?: number;
  /** Bound on connecting upstream (default 15 s). */
  connectTimeoutMs?: number;
  /** A tunnel or request idle this long is closed (default 5 min). */
  idleTimeoutMs?: number;
  /** Called for every decision (diagnostics, tests). Never throws into the proxy. */
  onDecision?(decision: EgressDecision, kind: "connect" | "http"): void;
}

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"]);

function forwardHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

/** `host:port` of a CONNECT request (IPv6 in brackets). */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority.trim());
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

function refusalResponse(r: Pick<EgressRefused, "status" | "message">): string {
  const reason = r.status === 403 ? "Forbidden" : r.status === 400 ? "Bad Request" : "Bad Gateway";
  const body = Buffer.from(r.message, "utf8");
  return `HTTP/1.1 ${r.status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${r.message}`;
}

/**
 * The host side of a sandbox's network: an HTTP proxy on a Unix socket that
 * speaks CONNECT (any TCP, typically TLS) and absolute-form HTTP. Every
 * target goes through the {@link EgressPolicy}; the connection is made to
 * the addresses the policy checked, and a refused request gets a 403 whose
 * text names the setting. Failures stay inside the proxy: every socket has
 * an error handler, so nothing a sandboxed client sends can throw in the
 * host process.
 */
export class EgressProxy {
  private readonly server: http.Server;
  private readonly opts: EgressProxyOptions;
  private readonly sockets = new Set<Duplex>();
  private closed = false;

  constructor(options: EgressProxyOptions) {
    this.opts = options;
    this.server = http.createServer({ requestTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 5_000 });
    this.server.maxConnections = options.maxConnections ?? 64;
    this.server.on("connection", (s: net.Socket) => this.track(s));
    this.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      this.handleRequest(req, res).catch(() => res.destroy());
    });
    this.server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.track(socket);
      this.handleConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.server.on("clientError", (_err, socket: Duplex) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      else socket.destroy();
    });
    this.server.on("error", () => undefined);
  }

  /** Listen on the socket path (replacing a stale socket) and restrict it to the sandbox uid. */
  async start(): Promise<void> {
    await rm(this.opts.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(this.opts.socketPath, () => {
        this.server.off("error", onError);
        resolve();
      });
    });
    if (this.opts.socketOwner) await chown(this.opts.socketPath, this.opts.socketOwner.uid, this.opts.socketOwner.gid);
    await chmod(this.opts.socketPath, 0o600);
  }

  /** Stop accepting, cut every open connection and tunnel, remove the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await done;
    await rm(this.opts.socketPath, { force: true });
  }

  private track(socket: Duplex): void {
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("close", () => this.sockets.delete(socket));
  }

  private note(decision: EgressDecision, kind: "connect" | "http"): void {
    try {
      this.opts.onDecision?.(decision, kind);
    } catch {
      /* diagnostics must not break the proxy */
    }
  }

  /** Connect to the first checked address that answers. */
  private async connectUpstream(addresses: ResolvedAddress[], port: number): Promise<net.Socket> {
    let last: unknown;
    for (const a of addresses) {
      try {
        return await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect({ host: a.address, port, family: a.family });
          s.setTimeout(this.opts.connectTimeoutMs ?? 15_000, () => s.destroy(new Error(`connect to ${a.address}:${port} timed out`)));
          s.once("connect", () => {
            s.off("error", reject);
            s.setTimeout(0);
            resolve(s);
          });
          s.once("error", reject);
        });
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new Error("no address to connect to");
  }

  private async handleConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? "");
    if (!target) {
      client.end(refusalResponse({ status: 400, message: `deerflow sandbox network: CONNECT needs host:port (got '${String(req.url).slice(0, 200)}').\n` }));
      return;
    }
    const decision = await this.opts.policy.check(target.host, target.port);
    this.note(decision, "connect");
    if (!decision.allowed) {
      client.end(refusalResponse(decision));
      return;
    }
    if (client.destroyed) return;
    let upstream: net.Socket;
    try {
      upstream = await this.connectUpstream(decision.addresses, decision.port);
    } catch (err) {
      client.end(refusalResponse({ status: 502, message: `deerflow sandbox network: could not connect to ${decision.host}:${decision.port} (${err instanceof Error ? err.message : String(err)}).\n` }));
      return;
    }
    this.track(upstream);
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    const idle = this.opts.idleTimeoutMs ?? 300_000;
    upstream.setTimeout(idle, () => upstream.destroy());
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, message: string) => {
      if (res.writableEnded) return;
      if (res.headersSent) return void res.destroy();
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(message);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      return send(400, "deerflow sandbox network: this is the sandbox's egress proxy; send absolute-form requests (set HTTP_PROXY) or CONNECT.\n");
    }
    if (url.protocol !== "http:") return send(400, `deerflow sandbox network: only http:// URLs are proxied as plain requests (got ${url.protocol}); https goes through CONNECT.\n`);
    const port = url.port ? Number(url.port) : 80;
    const decision = await this.opts.policy.check(url.hostname, port);
    this.note(decision, "http");
    if (!decision.allowed) return send(decision.status, decision.message);
    let upstream: net.Socket;
    try {
      upstream = await this.connectUpstream(decision.addresses, port);
    } catch (err) {
      return send(502, `deerflow sandbox network: could not connect to ${decision.host}:${port} (${err instanceof Error ? err.message : String(err)}).\n`);
    }
    this.track(upstream);
    const idle = this.opts.idleTimeoutMs ?? 300_000;
    const headers = forwardHeaders(req.headers);
    headers.host = url.host;
    const upReq = http.request({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      timeout: idle,
      createConnection: () => upstream,
    });
    upReq.on("timeout", () => upReq.destroy(new Error("upstream idle timeout")));
    upReq.on("error", (err) => send(502, `deerflow sandbox network: ${decision.host}:${port} failed (${err.message}).\n`));
    let answered = false;
    // Node's client drops a 101 to a request that asked for no upgrade with neither 'response' nor 'error':
    // without this the sandbox's connection would wait for an answer that never comes.
    upReq.on("close", () => {
      if (!answered) send(502, `deerflow sandbox network: ${decision.host}:${port} failed (the connection ended without a usable response).\n`);
    });
    upReq.on("response", (upRes) => {
      answered = true;
      upRes.on("error", () => res.destroy());
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, forwardHeaders(upRes.headers));
      upRes.pipe(res);
    });
    res.on("close", () => {
      upReq.destroy();
      upstream.destroy();
    });
    req.on("error", () => upReq.destroy());
    req.pipe(upReq);
  }
}
