/**
 * The host-side egress proxy over its Unix socket, without a sandbox: every
 * target here is a loopback server; the "gateway" stand-in on 127.0.0.1
 * counts connections so a refusal is proven to happen before connecting.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EgressPolicy, EgressProxy } from "../../../src/sandbox/network";
import type { HostResolver } from "../../../src/web-research";
import { parseSandboxConfig } from "../../../src/sandbox";

/** Send raw bytes to the proxy socket; resolve with everything it answered once it closes (a reset counts as closed). */
function exchange(socketPath: string, data: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    let out = "";
    s.on("data", (c) => (out += c.toString("utf8")));
    s.on("error", () => undefined);
    s.on("close", () => resolve(out));
    s.write(data);
  });
}

/** Open a CONNECT tunnel; resolve with the socket once the proxy's status line has arrived. */
function tunnel(socketPath: string, authority: string): Promise<{ socket: net.Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath);
    let head = "";
    const onData = (c: Buffer) => {
      head += c.toString("utf8");
      if (head.includes("\r\n\r\n")) {
        s.off("data", onData);
        resolve({ socket: s, head });
      }
    };
    s.on("data", onData);
    s.on("error", reject);
    s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

function listen(server: net.Server, host: string, port = 0): Promise<number> {
  return new Promise((r) => server.listen(port, host, () => r((server.address() as net.AddressInfo).port)));
}

/** A port on `host` that nothing listens on right now (so a policy can name it before its server starts). */
async function sparePort(host: string): Promise<number> {
  const s = net.createServer();
  const port = await listen(s, host);
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("egress proxy (Unix socket, CONNECT and absolute-form HTTP)", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "egress-proxy-"));
  const socketPath = path.join(dir, "egress.sock");
  let proxy: EgressProxy;
  let gatewayHits = 0;
  let gateway: net.Server;
  let gatewayPort = 0;
  let web: http.Server;
  let webPort = 0;
  const webRequests: Array<{ url?: string; headers: http.IncomingHttpHeaders }> = [];
  let echo: net.Server;
  let echoPort = 0;
  /** Ports of servers the tests start themselves (this machine's ports open one by one in allow_private). */
  let spare: number[] = [];
  const resolverCalls: string[] = [];
  let flip = 0;

  const resolver: HostResolver = async (host) => {
    resolverCalls.push(host);
    if (host === "public.example") return [{ address: "127.0.0.1", family: 4 }];
    // Answers differently on every lookup: only the first (checked) answer may be used.
    if (host === "rebind.example") return [{ address: flip++ === 0 ? "127.0.0.2" : "127.0.0.1", family: 4 }];
    throw new Error(`ENOTFOUND ${host}`);
  };

  beforeAll(async () => {
    gateway = net.createServer((s) => {
      gatewayHits++;
      s.destroy();
    });
    gatewayPort = await listen(gateway, "127.0.0.1");
    web = http.createServer((req, res) => {
      webRequests.push({ url: req.url, headers: req.headers });
      res.end(`web says hi to ${req.url}`);
    });
    webPort = await listen(web, "127.0.0.2");
    echo = net.createServer((s) => s.pipe(s));
    echoPort = await listen(echo, "127.0.0.2");
    spare = [await sparePort("127.0.0.2"), await sparePort("127.0.0.2"), await sparePort("127.0.0.2")];
    const allowPrivate = [webPort, echoPort, ...spare].map((p) => `127.0.0.2:${p}`);
    const settings = parseSandboxConfig({ network: { mode: "open", allow_private: allowPrivate } }).network;
    proxy = new EgressProxy({ policy: new EgressPolicy(settings, { resolver }), socketPath, maxConnections: 4 });
    await proxy.start();
  });

  afterAll(async () => {
    await proxy.close();
    gateway.close();
    web.close();
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("listens on a 0600 socket", () => {
    const st = statSync(socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it("forwards an absolute-form request to an allowed host, without proxy credentials", async () => {
    const res = await exchange(socketPath, `GET http://127.0.0.2:${webPort}/hello?x=1 HTTP/1.1\r\nHost: 127.0.0.2:${webPort}\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 200/);
    expect(res).toContain("web says hi to /hello?x=1");
    const seen = webRequests.at(-1);
    expect(seen?.headers.host).toBe(`127.0.0.2:${webPort}`);
    expect(seen?.headers["proxy-authorization"]).toBeUndefined();
  });

  it("tunnels CONNECT to an allowed host:port", async () => {
    const { socket, head } = await tunnel(socketPath, `127.0.0.2:${echoPort}`);
    expect(head).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    const back = new Promise<string>((r) => socket.once("data", (c) => r(c.toString())));
    socket.write("ping through the tunnel");
    expect(await back).toBe("ping through the tunnel");
    socket.destroy();
  });

  it.each(["127.0.0.1", "localhost", "0x7f000001", "2130706433", "[::ffff:127.0.0.1]", "0.0.0.0", "[::1]", "public.example"])(
    "refuses %s (CONNECT and plain HTTP) with 403 before connecting",
    async (host) => {
      const before = gatewayHits;
      const viaConnect = await exchange(socketPath, `CONNECT ${host}:${gatewayPort} HTTP/1.1\r\nHost: ${host}:${gatewayPort}\r\n\r\n`);
      expect(viaConnect).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(viaConnect).toMatch(/deerflow sandbox network: refused/);
      const viaHttp = await exchange(socketPath, `PUT http://${host}:${gatewayPort}/api/mcp/config HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
      expect(viaHttp).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(viaHttp).toMatch(/sandbox\.network/);
      expect(gatewayHits).toBe(before);
    },
  );

  it("resolves once and connects to the checked address (a second, different answer is never used)", async () => {
    resolverCalls.length = 0;
    const before = webRequests.length;
    const res = await exchange(socketPath, `GET http://rebind.example:${webPort}/pinned HTTP/1.1\r\nHost: rebind.example\r\nConnection: close\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 200/);
    expect(resolverCalls).toEqual(["rebind.example"]);
    expect(webRequests.length).toBe(before + 1);
    expect(webRequests.at(-1)?.headers.host).toBe(`rebind.example:${webPort}`);
  });

  it("answers garbage with 400 and keeps serving", async () => {
    expect(await exchange(socketPath, "hello\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(await exchange(socketPath, "CONNECT nonsense HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(await exchange(socketPath, "GET /relative HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 400[\s\S]*egress proxy/);
    expect(await exchange(socketPath, `GET ftp://127.0.0.2:${webPort}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
    const ok = await exchange(socketPath, `GET http://127.0.0.2:${webPort}/after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(ok).toContain("web says hi to /after");
  });

  it("an upstream that ends without a usable response (101 to a plain request) gets the client a 502, not a hung connection", async () => {
    const switcher = net.createServer((s) => {
      s.on("error", () => undefined);
      s.once("data", () => s.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nraw"));
    });
    const port = await listen(switcher, "127.0.0.2", spare[0]);
    const res = await exchange(socketPath, `GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 502[\s\S]*127\.0\.0\.2:\d+ failed/);
    switcher.close();
  });

  it("a refused upstream is a 502 naming the target", async () => {
    // nothing listens on this allowed port
    const port = spare[1];
    const res = await exchange(socketPath, `CONNECT 127.0.0.2:${port} HTTP/1.1\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 502[\s\S]*could not connect to 127\.0\.0\.2/);
  });

  it("caps concurrent connections and recovers when one ends", async () => {
    const held: net.Socket[] = [];
    let allHeld!: () => void;
    const fourHeld = new Promise<void>((r) => (allHeld = r));
    const holder = net.createServer((s) => {
      if (held.push(s) === 4) allHeld();
    });
    const holderPort = await listen(holder, "127.0.0.2", spare[2]);
    const open = await Promise.all([0, 1, 2, 3].map(() => tunnel(socketPath, `127.0.0.2:${holderPort}`)));
    await fourHeld;
    expect(await exchange(socketPath, `CONNECT 127.0.0.2:${echoPort} HTTP/1.1\r\n\r\n`)).toBe("");
    // Ending a tunnel from upstream makes the proxy destroy its client side (freeing the slot) before the client sees the close.
    const oneClosed = Promise.race(open.map((t) => new Promise((r) => t.socket.once("close", r))));
    held[0].destroy();
    await oneClosed;
    expect(await exchange(socketPath, `CONNECT 127.0.0.1:${gatewayPort} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403/);
    for (const t of open) t.socket.destroy();
    holder.close();
  });
});

describe("egress proxy close()", () => {
  it("cuts open tunnels and removes the socket", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "egress-proxy-"));
    const socketPath = path.join(dir, "egress.sock");
    const echo = net.createServer((s) => s.pipe(s));
    const port = await listen(echo, "127.0.0.2");
    const settings = parseSandboxConfig({ network: { mode: "open", allow_private: [`127.0.0.2:${port}`] } }).network;
    const proxy = new EgressProxy({ policy: new EgressPolicy(settings), socketPath });
    await proxy.start();
    const { socket, head } = await tunnel(socketPath, `127.0.0.2:${port}`);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const closed = new Promise((r) => socket.once("close", r));
    await proxy.close();
    await closed;
    expect(() => statSync(socketPath)).toThrow();
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
