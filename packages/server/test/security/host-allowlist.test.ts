import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { HostAllowlist, parseHostPort } from "../../src/security";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";
import { rawRequest } from "./raw-http";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("Host allowlist (DNS rebinding)", () => {
  it("parses Host values the way browsers normalise them", () => {
    expect(parseHostPort("LocalHost:2026")).toEqual({ hostname: "localhost", port: 2026 });
    expect(parseHostPort("[0:0:0:0:0:0:0:1]:80")).toEqual({ hostname: "[::1]", port: 80 });
    expect(parseHostPort("localhost.")).toEqual({ hostname: "localhost", port: undefined });
    expect(parseHostPort("::1")).toBeUndefined();
    expect(parseHostPort("::1", { bareIpv6: true })).toEqual({ hostname: "[::1]", port: undefined });
    for (const bad of ["", "a@b", "a/b", "a b", "x:99999", "a?b"]) expect(parseHostPort(bad), bad).toBeUndefined();
  });

  it("allows loopback names on any port, the bind address, configured names (with or without port)", () => {
    const list = new HostAllowlist({ bindHost: "127.0.0.2", extra: ["DeerFlow.LAN", "10.9.8.7:2026", "fd00::5"] });
    for (const ok of ["localhost:2026", "127.0.0.1:1", "[::1]:2026", "127.0.0.2:2026", "deerflow.lan", "deerflow.lan:9", "10.9.8.7:2026", "[fd00::5]:1"]) {
      expect(list.allows(ok), ok).toBe(true);
    }
    for (const bad of ["evil.example", "evil.example:2026", "10.9.8.7:2027", "10.9.8.7", "127.0.0.3:2026", "localhost.evil.example", "[::2]"]) {
      expect(list.allows(bad), bad).toBe(false);
    }
    expect(new HostAllowlist({ extra: ["not a host", "a/b"] }).invalid).toEqual(["not a host", "a/b"]);
  });

  it("a wildcard bind allows this machine's interface addresses and host name, nothing else", () => {
    const list = new HostAllowlist({ bindHost: "0.0.0.0", extra: [] });
    const addrs = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []);
    for (const a of addrs) expect(list.allows(a.family === "IPv6" ? `[${a.address.replace(/%.*$/, "")}]:2026` : `${a.address}:2026`), a.address).toBe(true);
    expect(list.allows(`${os.hostname()}:2026`)).toBe(true);
    expect(list.allows("evil.example:2026")).toBe(false);
  });

  it("the gateway refuses Host: evil.example with 403 naming server.allowed_hosts; loopback names and /health are served", async () => {
    gw = await startTestGateway();
    const port = new URL(gw.url).port;
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const res = await rawRequest(`${gw.url}/api/models`, { headers: { host } });
      expect(res.status, host).toBe(403);
      expect(JSON.parse(res.body).detail).toContain("server.allowed_hosts");
    }
    // state changes as well (the rebinding page would POST)
    const post = await rawRequest(`${gw.url}/api/threads`, { method: "POST", headers: { host: "evil.example", "content-type": "application/json" }, body: "{}" });
    expect(post.status).toBe(403);
    expect(await (await postJson(`${gw.url}/api/threads/search`, {})).json()).toEqual([]);
    for (const host of [`localhost:${port}`, `LOCALHOST:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await rawRequest(`${gw.url}/api/models`, { headers: { host } })).status, host).toBe(200);
    }
    expect((await rawRequest(`${gw.url}/health`, { headers: { host: "evil.example" } })).status).toBe(200);
  });

  it("server.allowed_hosts (config) and the allowedHosts option open more names", async () => {
    gw = await startTestGateway({ appConfig: { models: [], server: { allowed_hosts: ["deerflow.lan"] } }, allowedHosts: ["box.internal:1234"] });
    const at = (host: string) => rawRequest(`${gw!.url}/api/models`, { headers: { host } }).then((r) => r.status);
    expect(await at("deerflow.lan:8080")).toBe(200);
    expect(await at("box.internal:1234")).toBe(200);
    expect(await at("box.internal:1235")).toBe(403);
  });
});
