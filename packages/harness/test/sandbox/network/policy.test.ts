/**
 * The egress policy decides before any connection: these tests never open a
 * socket. Names resolve through a stub resolver; IP literals are not
 * resolved at all.
 */
import { describe, expect, it } from "vitest";
import { EgressPolicy, protectedHostPorts, protectHostPort } from "../../../src/sandbox/network";
import type { EgressDecision, NetworkSettings } from "../../../src/sandbox/network";
import { parseSandboxConfig } from "../../../src/sandbox";
import type { HostResolver } from "../../../src/web-research";

/** This machine as the policy sees it: loopback plus a public address of one of its interfaces. */
const LOCAL = new Set(["127.0.0.1", "::1", "93.184.215.99"]);

function policy(network: unknown, answers: Record<string, string[]> = {}, calls: string[] = []): EgressPolicy {
  const resolver: HostResolver = async (host) => {
    calls.push(host);
    const list = answers[host];
    if (!list) throw new Error(`ENOTFOUND ${host}`);
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  const settings: NetworkSettings = parseSandboxConfig({ network }).network;
  return new EgressPolicy(settings, { resolver, localAddresses: () => LOCAL });
}

function refused(d: EgressDecision): string {
  expect(d.allowed).toBe(false);
  return d.allowed ? "" : d.message;
}

describe("egress policy: open mode", () => {
  const open = policy("open", { "example.com": ["93.184.215.14"], "v6.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"] });

  it("allows public addresses and returns the checked address to connect to", async () => {
    await expect(open.check("example.com", 443)).resolves.toMatchObject({ allowed: true, addresses: [{ address: "93.184.215.14", family: 4 }] });
    await expect(open.check("v6.example", 443)).resolves.toMatchObject({ allowed: true });
    await expect(open.check("8.8.8.8", 53)).resolves.toMatchObject({ allowed: true, addresses: [{ address: "8.8.8.8" }] });
  });

  it.each([
    ["127.0.0.1", "this-machine"],
    ["127.0.0.2", "this-machine"],
    ["0x7f000001", "this-machine"],
    ["2130706433", "this-machine"],
    ["0177.0.0.1", "this-machine"],
    ["127.1", "this-machine"],
    ["[::1]", "this-machine"],
    ["[::ffff:127.0.0.1]", "this-machine"],
    ["[::ffff:7f00:1]", "this-machine"],
    ["93.184.215.99", "this-machine"],
    ["0.0.0.0", "never reach"],
    ["0", "never reach"],
    ["[::]", "never reach"],
    ["[::127.0.0.1]", "never reach"],
    ["[64:ff9b::7f00:1]", "never reach"],
    ["[64:ff9b::a00:1]", "never reach"],
    ["[2002:7f00:1::]", "never reach"],
    ["224.0.0.1", "never reach"],
    ["255.255.255.255", "never reach"],
    ["10.0.0.5", "private"],
    ["172.16.3.4", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.100.100.200", "private"],
    ["[fd00:ec2::254]", "private"],
    ["[fc00::1]", "private"],
    ["169.254.169.254", "link-local"],
    ["169.254.170.2", "link-local"],
    ["[fe80::1]", "link-local"],
  ])("refuses %s (%s) without resolving, naming the setting", async (host, kind) => {
    const msg = refused(await open.check(host, 80));
    expect(msg).toContain(kind);
    if (kind !== "never reach") expect(msg).toContain("sandbox.network.allow_private");
  });

  it("refuses localhost and metadata host names", async () => {
    for (const host of ["localhost", "LOCALHOST.", "foo.localhost", "metadata.google.internal"]) {
      expect(refused(await open.check(host, 80))).toMatch(/this machine or a metadata service/);
    }
  });

  it("DNS rebinding: a public-looking name that resolves to loopback (or to a mix) is refused", async () => {
    const p = policy("open", { "public.example": ["127.0.0.1"], "mixed.example": ["93.184.215.14", "10.1.2.3"], "mapped.example": ["::ffff:169.254.169.254"] });
    expect(refused(await p.check("public.example", 443))).toMatch(/'public.example' resolves to 127.0.0.1, a this-machine address/);
    expect(refused(await p.check("mixed.example", 443))).toMatch(/10.1.2.3, a private address/);
    expect(refused(await p.check("mapped.example", 80))).toMatch(/169.254.169.254, a link-local address/);
  });

  it("an unresolvable name is a 502, not an allow", async () => {
    await expect(open.check("nope.invalid", 80)).resolves.toMatchObject({ allowed: false, status: 502 });
  });

  it("rejects malformed hosts without resolving them", async () => {
    const calls: string[] = [];
    const p = policy("open", {}, calls);
    for (const host of ["a b", "evil.com/x", "-x", "[1:2]", "a\u0000b"]) {
      await expect(p.check(host, 80)).resolves.toMatchObject({ allowed: false, status: 400 });
    }
    // A zone id still parses as the link-local address it qualifies.
    expect(refused(await p.check("[fe80::1%25eth0]", 80))).toMatch(/link-local/);
    expect(calls).toEqual([]);
  });

  it("rejects malformed ports", async () => {
    await expect(open.check("example.com", 0)).resolves.toMatchObject({ allowed: false, status: 400 });
    await expect(open.check("example.com", 70000)).resolves.toMatchObject({ allowed: false, status: 400 });
  });
});

describe("egress policy: allow_private", () => {
  it("a CIDR opens private addresses inside it only", async () => {
    const p = policy({ mode: "open", allow_private: ["10.20.0.0/16"] }, { "wiki.corp": ["10.20.1.5"], "other.corp": ["10.30.1.5"] });
    await expect(p.check("wiki.corp", 443)).resolves.toMatchObject({ allowed: true, addresses: [{ address: "10.20.1.5" }] });
    await expect(p.check("10.20.9.9", 22)).resolves.toMatchObject({ allowed: true });
    await expect(p.check("[::ffff:10.20.9.9]", 22)).resolves.toMatchObject({ allowed: true, addresses: [{ address: "10.20.9.9", family: 4 }] });
    refused(await p.check("other.corp", 443));
    refused(await p.check("10.30.0.1", 443));
  });

  it("a host name entry opens the private addresses it resolves to, with its port", async () => {
    const p = policy({ mode: "open", allow_private: ["wiki.corp:443", "*.lab.corp"] }, { "wiki.corp": ["192.168.4.4"], "a.lab.corp": ["172.20.0.3"], "lab.corp": ["172.20.0.1"] });
    await expect(p.check("wiki.corp", 443)).resolves.toMatchObject({ allowed: true });
    refused(await p.check("wiki.corp", 80));
    await expect(p.check("a.lab.corp", 8080)).resolves.toMatchObject({ allowed: true });
    refused(await p.check("lab.corp", 8080));
  });

  it("this machine and link-local open only for an exact IP, never through a CIDR or a name", async () => {
    const p = policy({ mode: "open", allow_private: ["127.0.0.0/8", "169.254.0.0/16", "devbox.corp", "0.0.0.0/0"] }, { "devbox.corp": ["127.0.0.1"] });
    for (const host of ["127.0.0.2", "169.254.169.254", "devbox.corp", "93.184.215.99"]) {
      expect(refused(await p.check(host, 80))).toMatch(/exact IP/);
    }
    const exact = policy({ mode: "open", allow_private: ["127.0.0.2:8080", "169.254.10.10"] });
    await expect(exact.check("127.0.0.2", 8080)).resolves.toMatchObject({ allowed: true });
    refused(await exact.check("127.0.0.2", 8081));
    refused(await exact.check("127.0.0.1", 8080));
    // A this-machine IP without a port opens none of its ports (a frontend proxying to the gateway may listen on any).
    const bare = policy({ mode: "open", allow_private: ["127.0.0.2", "93.184.215.99"] });
    expect(refused(await bare.check("127.0.0.2", 3000))).toMatch(/exact IP and port/);
    refused(await bare.check("93.184.215.99", 3000));
    await expect(exact.check("169.254.10.10", 80)).resolves.toMatchObject({ allowed: true });
  });

  it("DeerFlow's own gateway port stays closed on every address of this machine, even for an exact IP", async () => {
    const settings = parseSandboxConfig({ network: { mode: "open", allow_private: ["127.0.0.1:5432", "127.0.0.1:2026", "93.184.215.99:2026"] } }).network;
    const p = new EgressPolicy(settings, { localAddresses: () => LOCAL, protectedPorts: () => new Set([2026]) });
    await expect(p.check("127.0.0.1", 5432)).resolves.toMatchObject({ allowed: true });
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "93.184.215.99"]) {
      expect(refused(await p.check(host, 2026))).toMatch(/port 2026 of this machine is DeerFlow's own gateway/);
    }
    // The same port on another host is not the gateway.
    await expect(p.check("93.184.215.14", 2026)).resolves.toMatchObject({ allowed: true });
  });

  it("protectHostPort marks a port while it is held", async () => {
    const release = protectHostPort(45123);
    const again = protectHostPort(45123);
    expect(protectedHostPorts().has(45123)).toBe(true);
    release();
    release();
    expect(protectedHostPorts().has(45123)).toBe(true);
    again();
    expect(protectedHostPorts().has(45123)).toBe(false);
  });

  it("unspecified, multicast and translated forms never open", async () => {
    const p = policy({ mode: "open", allow_private: ["0.0.0.0", "224.0.0.1", "64:ff9b::a00:1"] });
    for (const host of ["0.0.0.0", "224.0.0.1", "[64:ff9b::a00:1]"]) expect(refused(await p.check(host, 80))).toMatch(/never reach/);
  });
});

describe("egress policy: allowlist mode", () => {
  it("refuses a name not in allow before resolving it", async () => {
    const calls: string[] = [];
    const p = policy({ mode: "allowlist", allow: ["pypi.org", "*.pythonhosted.org:443"] }, { "pypi.org": ["151.101.0.223"], "files.pythonhosted.org": ["151.101.1.63"] }, calls);
    expect(refused(await p.check("evil.example", 443))).toMatch(/not in sandbox\.network\.allow \(mode 'allowlist'\)/);
    refused(await p.check("files.pythonhosted.org", 80));
    refused(await p.check("pythonhosted.org", 443));
    expect(calls).toEqual([]);
    await expect(p.check("pypi.org", 443)).resolves.toMatchObject({ allowed: true });
    await expect(p.check("FILES.pythonhosted.org.", 443)).resolves.toMatchObject({ allowed: true });
    expect(calls).toEqual(["pypi.org", "files.pythonhosted.org"]);
  });

  it("a listed name still cannot resolve to a private or loopback address", async () => {
    const p = policy({ mode: "allowlist", allow: ["pypi.org"] }, { "pypi.org": ["127.0.0.1"] });
    expect(refused(await p.check("pypi.org", 443))).toMatch(/this-machine/);
  });

  it("IP and CIDR entries match literal targets; a private address in allow still needs allow_private", async () => {
    const p = policy({ mode: "allowlist", allow: ["151.101.0.0/16", "10.0.0.5"], allow_private: ["10.9.9.9"] });
    await expect(p.check("151.101.0.20", 443)).resolves.toMatchObject({ allowed: true });
    refused(await p.check("151.102.0.20", 443));
    expect(refused(await p.check("10.0.0.5", 443))).toMatch(/allow_private/);
    await expect(p.check("10.9.9.9", 5432)).resolves.toMatchObject({ allowed: true });
  });
});

describe("egress policy: isolated", () => {
  it("refuses everything", async () => {
    const p = new EgressPolicy(parseSandboxConfig({}).network);
    expect(refused(await p.check("93.184.215.14", 80))).toMatch(/isolated/);
  });
});

describe("egress policy: name lookups", () => {
  it("at most maxConcurrentLookups names resolve at once, across every check of the policy (the system resolver holds a libuv thread per lookup)", async () => {
    const pending: Array<() => void> = [];
    let inFlight = 0;
    let peak = 0;
    const resolver: HostResolver = (host) =>
      new Promise((resolve) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        pending.push(() => {
          inFlight--;
          resolve([{ address: "93.184.215.14", family: 4 }]);
        });
        void host;
      });
    const p = new EgressPolicy(parseSandboxConfig({ network: "open" }).network, { resolver, localAddresses: () => LOCAL, maxConcurrentLookups: 2 });
    const checks = Array.from({ length: 6 }, (_, i) => p.check(`slow-${i}.example`, 443));
    // Let every check reach the resolver (or the queue in front of it).
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(pending.length).toBe(2);
    while (pending.length) {
      pending.shift()!();
      for (let i = 0; i < 10; i++) await Promise.resolve();
    }
    const decisions = await Promise.all(checks);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(peak).toBe(2);
  });
});

describe("egress policy: a queued lookup", () => {
  it("that times out while waiting is refused (502) and never started", async () => {
    const calls: string[] = [];
    let release!: () => void;
    const resolver: HostResolver = (host) => {
      calls.push(host);
      return new Promise((resolve) => (release = () => resolve([{ address: "93.184.215.14", family: 4 }])));
    };
    const p = new EgressPolicy(parseSandboxConfig({ network: "open" }).network, { resolver, localAddresses: () => LOCAL, maxConcurrentLookups: 1, resolveTimeoutMs: 50 });
    const first = p.check("held.example", 443);
    const queued = await p.check("queued.example", 443);
    expect(refused(queued)).toMatch(/'queued\.example' could not be resolved \(resolving queued\.example timed out/);
    expect(queued.allowed ? 0 : queued.status).toBe(502);
    release();
    await first;
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(calls).toEqual(["held.example"]);
  });
});
