/**
 * The sandbox network with real bubblewrap. Only loopback traffic happens:
 * the "gateway" stand-in listens on 127.0.0.1 (this machine, never
 * reachable), the "intranet" server on 127.0.0.2 (reachable only through
 * an exact `allow_private` entry). Names resolve through a stub resolver
 * handed to the provider, so no DNS query leaves this machine either.
 * Every refusal is also checked on the stand-in's side: it saw nothing.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BwrapSandboxProvider, parseSandboxConfig } from "../../../src/sandbox";
import type { Sandbox } from "../../../src/sandbox";
import type { HostResolver } from "../../../src/web-research";
import { bwrapAvailable, tempBase } from "../helpers";

const HAS_BWRAP = bwrapAvailable();
const execFileAsync = promisify(execFile);

function listen(server: net.Server, host: string): Promise<number> {
  return new Promise((r) => server.listen(0, host, () => r((server.address() as net.AddressInfo).port)));
}

describe.skipIf(!HAS_BWRAP)("bwrap sandbox network (real bubblewrap, loopback only)", () => {
  const base = tempBase("dfnet-");
  const providers: BwrapSandboxProvider[] = [];
  let gatewayHits = 0;
  let gateway: http.Server;
  let gw = 0;
  let intranet: http.Server;
  let web = 0;
  const resolverCalls: string[] = [];
  const resolver: HostResolver = async (host) => {
    resolverCalls.push(host);
    const table: Record<string, string> = { "public.example": "127.0.0.1", "pypi.org": "127.0.0.1", "intranet.example": "127.0.0.2" };
    if (!table[host]) throw new Error(`ENOTFOUND ${host}`);
    return [{ address: table[host], family: 4 }];
  };

  async function sandboxFor(network: unknown, thread = "t1"): Promise<Sandbox> {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", network }), { baseDir: base.dir, networkResolver: resolver });
    providers.push(provider);
    return provider.get(await provider.acquire(thread)) as Sandbox;
  }

  let open: Sandbox;

  beforeAll(async () => {
    gateway = http.createServer((req, res) => {
      gatewayHits++;
      res.end("gateway reached");
    });
    gw = await listen(gateway, "127.0.0.1");
    intranet = http.createServer((req, res) => res.end(`intranet ${req.method} ${req.url}`));
    web = await listen(intranet, "127.0.0.2");
    open = await sandboxFor({ mode: "open", allow_private: [`127.0.0.2:${web}`] });
  });

  afterAll(async () => {
    await Promise.all(providers.map((p) => p.shutdown()));
    gateway.close();
    intranet.close();
    base.cleanup();
  });

  it("control: the stand-in gateway answers an unsandboxed curl on the host", async () => {
    const { stdout } = await execFileAsync("curl", ["-sS", "-m", "10", "--noproxy", "*", `http://127.0.0.1:${gw}/`], { encoding: "utf8" });
    expect(stdout).toBe("gateway reached");
    expect(gatewayHits).toBe(1);
    gatewayHits = 0;
  });

  it("open mode: the command sees the proxy variables and a read-only network dir", async () => {
    const r = await open.executeCommand("env | grep -i _proxy= | sort; cd /run/deerflow-net && ls egress.sock forwarder.cjs; touch /run/deerflow-net/x 2>&1 || echo ro");
    expect(r.stdout).toContain("HTTP_PROXY=http://127.0.0.1:3128");
    expect(r.stdout).toContain("HTTPS_PROXY=http://127.0.0.1:3128");
    expect(r.stdout).toContain("ALL_PROXY=http://127.0.0.1:3128");
    expect(r.stdout).toContain("NO_PROXY=localhost,127.0.0.1,::1");
    expect(r.stdout, r.stdout + r.stderr).toMatch(/egress\.sock\nforwarder\.cjs/);
    expect(r.stdout).toMatch(/ro$/m);
  });

  it("open mode: curl to this machine (the gateway stand-in) is refused, by every address form, with or without the proxy", async () => {
    const put = `-X PUT -H 'content-type: application/json' -d '{"mcp_servers":{}}'`;
    const direct = await open.executeCommand(`curl -sS -m 10 ${put} http://127.0.0.1:${gw}/api/mcp/config`);
    expect(direct.exitCode).not.toBe(0);
    for (const host of ["127.0.0.1", "0x7f000001", "2130706433", "0177.0.0.1", "[::ffff:127.0.0.1]", "[::1]", "localhost", "0.0.0.0"]) {
      const viaProxy = await open.executeCommand(`curl -sS -m 10 --noproxy '' ${put} 'http://${host}:${gw}/api/mcp/config'`);
      expect(viaProxy.stdout, host).toMatch(/deerflow sandbox network: refused/);
      const viaConnect = await open.executeCommand(`curl -sS -m 10 --noproxy '' -p ${put} 'http://${host}:${gw}/api/mcp/config' 2>&1`);
      expect(viaConnect.stdout, host).toMatch(/CONNECT tunnel failed, response 403/);
    }
    expect(gatewayHits).toBe(0);
  });

  it("DNS rebinding: a public-looking name that resolves to loopback is refused", async () => {
    const r = await open.executeCommand(`curl -sS -m 10 http://public.example:${gw}/api/threads`);
    expect(r.stdout).toMatch(/'public\.example' resolves to 127\.0\.0\.1, a this-machine address/);
    expect(r.stdout).toMatch(/sandbox\.network\.allow_private/);
    expect(gatewayHits).toBe(0);
  });

  it("direct TCP past the proxy reaches nothing (own network namespace)", async () => {
    for (const target of [`127.0.0.1/${gw}`, `127.0.0.2/${web}`]) {
      const r = await open.executeCommand(`bash -c 'exec 3<>/dev/tcp/${target} && echo CONNECTED' 2>&1`);
      expect(r.stdout).not.toContain("CONNECTED");
    }
    const links = await open.executeCommand("ls /sys/class/net 2>/dev/null || cat /proc/net/dev");
    expect(links.stdout).not.toMatch(/eth|ens|enp|wlan|docker/);
    expect(gatewayHits).toBe(0);
  });

  it("allow_private: an exact IP is reachable through the proxy (plain HTTP, CONNECT, wget, python urllib)", async () => {
    const plain = await open.executeCommand(`curl -sS -m 10 http://127.0.0.2:${web}/plain`);
    expect(plain.stdout).toBe("intranet GET /plain");
    const tunnel = await open.executeCommand(`curl -sS -m 10 -p http://127.0.0.2:${web}/tunnel`);
    expect(tunnel.stdout).toBe("intranet GET /tunnel");
    const byName = await open.executeCommand(`curl -sS -m 10 -X POST http://intranet.example:${web}/named`);
    expect(byName.stdout).toBe("intranet POST /named");
    const wget = await open.executeCommand(`wget -q -O - http://127.0.0.2:${web}/wget`);
    expect(wget.stdout).toBe("intranet GET /wget");
    const py = await open.executeCommand(`python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.2:${web}/py').read().decode())"`);
    expect(py.stdout.trim()).toBe("intranet GET /py");
    expect(gatewayHits).toBe(0);
  });

  it("network: true still parses and behaves as open", async () => {
    const sb = await sandboxFor(true, "t-true");
    const r = await sb.executeCommand(`echo "$HTTPS_PROXY"; curl -sS -m 10 --noproxy '' http://127.0.0.1:${gw}/`);
    expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:3128\n/);
    expect(r.stdout).toMatch(/deerflow sandbox network: refused 127\.0\.0\.1/);
    const intranetRefused = await sb.executeCommand(`curl -sS -m 10 http://127.0.0.2:${web}/`);
    expect(intranetRefused.stdout).toMatch(/this-machine address/);
    expect(gatewayHits).toBe(0);
  });

  it("allowlist mode refuses a host that is not listed before resolving or connecting", async () => {
    const sb = await sandboxFor({ mode: "allowlist", allow: ["pypi.org"] }, "t-allow");
    resolverCalls.length = 0;
    const r = await sb.executeCommand(`curl -sS -m 10 http://intranet.example:${web}/; echo; curl -sS -m 10 -p http://127.0.0.2:${web}/ 2>&1`);
    expect(r.stdout).toMatch(/refused intranet\.example:\d+: not in sandbox\.network\.allow \(mode 'allowlist'\)/);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    expect(resolverCalls).toEqual([]);
    const listed = await sb.executeCommand(`curl -sS -m 10 http://pypi.org:${gw}/`);
    expect(listed.stdout).toMatch(/'pypi\.org' resolves to 127\.0\.0\.1, a this-machine address/);
    expect(resolverCalls).toEqual(["pypi.org"]);
    expect(gatewayHits).toBe(0);
  });

  it("isolated (the default): no proxy, no forwarder, nothing reachable", async () => {
    const sb = await sandboxFor(undefined, "t-iso");
    const r = await sb.executeCommand(`env | grep -ic _proxy=; ls /run/deerflow-net 2>&1; curl -sS -m 10 --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.2:${web}/ 2>&1`);
    expect(r.stdout).toMatch(/^0\n/);
    expect(r.stdout).toMatch(/No such file or directory/);
    expect(r.stdout).toMatch(/Failed to connect|Couldn't connect/);
    expect(gatewayHits).toBe(0);
  });

  it("each sandbox has its own proxy socket, owned by the sandbox uid, removed on release", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", network: "open" }), { baseDir: base.dir, networkResolver: resolver });
    providers.push(provider);
    const netDirs = () => new Set(readdirSync(os.tmpdir()).filter((n) => n.startsWith("deerflow-net-")));
    const before = netDirs();
    const id = await provider.acquire("t-release");
    const sb = provider.get(id) as Sandbox;
    const r = await sb.executeCommand("ls -ln /run/deerflow-net/egress.sock");
    expect(r.stdout).toMatch(/^srw------- 1 /);
    const mine = [...netDirs()].filter((n) => !before.has(n));
    expect(mine).toHaveLength(1);
    const socket = path.join(os.tmpdir(), mine[0], "egress.sock");
    const owner = statSync(socket).uid;
    expect(owner).toBe(process.getuid?.() === 0 ? 65534 : process.getuid?.());
    await provider.release(id);
    expect(existsSync(socket)).toBe(false);
    expect(netDirs().has(mine[0])).toBe(false);
  });
});
