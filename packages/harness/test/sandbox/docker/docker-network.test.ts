/**
 * Allowlist egress of the Docker sandbox through the shared egress proxy.
 * Only loopback traffic: the allowed "intranet" server listens on 127.0.0.2
 * (reachable only through an exact `allow_private` entry), the "gateway"
 * stand-in on 127.0.0.1 must never be reached. Names resolve through a stub
 * resolver. The container has no network of its own: a plain HTTP request
 * over bash's /dev/tcp to the forwarder's loopback port is the only way out.
 */
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import type { HostResolver } from "../../../src/web-research";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled() && process.getuid?.() === 0;
if (!enabled) console.warn("[docker sandbox tests] SKIPPING network modes: they need Docker and a root service (nsenter)");

function listen(server: net.Server, host: string): Promise<number> {
  return new Promise((r) => server.listen(0, host, () => r((server.address() as net.AddressInfo).port)));
}

/** A raw absolute-form GET through the forwarder at 127.0.0.1:3128 (bash's /dev/tcp; the test image has no curl). */
function proxiedGet(url: string): string {
  const host = new URL(url).host;
  const script = `exec 3<>/dev/tcp/127.0.0.1/3128 || exit 7; printf 'GET ${url} HTTP/1.1\\r\\nHost: ${host}\\r\\nConnection: close\\r\\n\\r\\n' >&3; timeout 10 cat <&3`;
  return `bash -c "${script}"`;
}

describe.skipIf(!enabled)("Docker sandbox network allowlist (real Docker, loopback only)", () => {
  let fx: DockerFixture;
  let sandbox: DockerSandbox;
  let gateway: http.Server;
  let gatewayHits = 0;
  let gw = 0;
  let intranet: http.Server;
  let web = 0;
  const resolver: HostResolver = async (host) => {
    const table: Record<string, string> = { "intranet.example": "127.0.0.2", "public.example": "127.0.0.1" };
    if (!table[host]) throw new Error(`ENOTFOUND ${host}`);
    return [{ address: table[host], family: 4 }];
  };

  beforeAll(async () => {
    gateway = http.createServer((_req, res) => {
      gatewayHits++;
      res.end("gateway reached");
    });
    gw = await listen(gateway, "127.0.0.1");
    intranet = http.createServer((req, res) => res.end(`intranet ${req.method} ${req.url}`));
    web = await listen(intranet, "127.0.0.2");
    fx = dockerFixture({ network: { mode: "allowlist", allow: ["intranet.example"], allow_private: [`127.0.0.2:${web}`] } }, { networkResolver: resolver });
    sandbox = fx.provider.get(await fx.provider.acquire("net")) as DockerSandbox;
  });

  afterAll(async () => {
    await fx?.cleanup();
    gateway?.close();
    intranet?.close();
  });

  it("sets the proxy variables and still has no interface but lo", async () => {
    const r = await sandbox.executeCommand("ls /sys/class/net; echo $HTTP_PROXY");
    expect(r.stdout).toBe("lo\nhttp://127.0.0.1:3128\n");
  });

  it("reaches an allowed host through the proxy", async () => {
    const r = await sandbox.executeCommand(proxiedGet(`http://intranet.example:${web}/hello`), { timeoutMs: 30_000 });
    expect(r.stdout).toContain("200 OK");
    expect(r.stdout).toContain("intranet GET /hello");
  });

  it("refuses a host outside the allowlist and this machine, and the stand-in saw nothing", async () => {
    const r1 = await sandbox.executeCommand(proxiedGet(`http://public.example:${gw}/`), { timeoutMs: 30_000 });
    expect(r1.stdout).toMatch(/HTTP\/1\.1 403/);
    const r2 = await sandbox.executeCommand(proxiedGet(`http://127.0.0.1:${gw}/`), { timeoutMs: 30_000 });
    expect(r2.stdout).toMatch(/HTTP\/1\.1 403/);
    expect(gatewayHits).toBe(0);
  });

  it("keeps working after the container is killed (a new forwarder for the new container)", async () => {
    const name = fx.provider.containerOf(sandbox.id)?.name as string;
    const { spawnSync } = await import("node:child_process");
    expect(spawnSync("docker", ["kill", name]).status).toBe(0);
    const r = await sandbox.executeCommand(proxiedGet(`http://intranet.example:${web}/again`), { timeoutMs: 30_000 });
    expect(r.stdout).toContain("intranet GET /again");
  });
});
