import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../../src/sandbox";
import { describeNetworkPolicy, parseNetworkEntry } from "../../src/sandbox/network";

const net = (network: unknown) => parseSandboxConfig({ network }).network;

describe("sandbox.network setting", () => {
  it("defaults to isolated; false is isolated, true is open (configs written before modes keep working)", () => {
    expect(parseSandboxConfig({}).network).toEqual({ mode: "isolated", allow: [], allow_private: [] });
    expect(parseSandboxConfig(undefined).network.mode).toBe("isolated");
    expect(net(false).mode).toBe("isolated");
    expect(net(null).mode).toBe("isolated");
    expect(net(true)).toEqual({ mode: "open", allow: [], allow_private: [] });
  });

  it("accepts a mode string and the object form", () => {
    expect(net("open").mode).toBe("open");
    expect(net("isolated").mode).toBe("isolated");
    expect(net({ mode: "allowlist", allow: ["pypi.org", "*.npmjs.org:443", "151.101.0.0/16", "[2001:db8::1]:443"] })).toEqual({
      mode: "allowlist",
      allow: ["pypi.org", "*.npmjs.org:443", "151.101.0.0/16", "[2001:db8::1]:443"],
      allow_private: [],
    });
    expect(net({ mode: "open", allow_private: ["wiki.corp", "10.20.0.0/16", "127.0.0.2:8080"] }).allow_private).toHaveLength(3);
  });

  it.each([
    ["bogus", /sandbox\.network\.mode: must be one of isolated, allowlist, open/],
    [5, /sandbox\.network: expected false, true, 'isolated', 'allowlist', 'open' or \{mode, allow, allow_private\}/],
    ["allowlist", /sandbox\.network\.allow: mode 'allowlist' needs at least one entry/],
    [{ allow: ["a.com"] }, /sandbox\.network\.mode: must be one of/],
    [{ mode: "open", allow: ["a.com"] }, /sandbox\.network\.allow: only applies to mode 'allowlist'/],
    [{ mode: "isolated", allow_private: ["10.0.0.0/8"] }, /sandbox\.network\.allow_private: has no effect in mode 'isolated'/],
    [{ mode: "open", extra: 1 }, /sandbox\.network: unknown key 'extra'/],
    [{ mode: "allowlist", allow: ["ok.org", "https://a.com"] }, /sandbox\.network\.allow\.1: 'https:\/\/a\.com' is not a host.*not a URL/],
    [{ mode: "allowlist", allow: ["a.com:0"] }, /sandbox\.network\.allow\.0: 'a\.com:0': port must be 1-65535/],
    [{ mode: "open", allow_private: ["10.0.0.0/33"] }, /sandbox\.network\.allow_private\.0: .*not a valid CIDR/],
    [{ mode: "open", allow_private: ["bad host!"] }, /not a valid host name/],
    [{ mode: "open", allow_private: ["a.*.com"] }, /'\*\.' prefix is the only wildcard/],
  ])("refuses %j with an error naming the key", (value, message) => {
    expect(() => net(value)).toThrow(message);
  });

  it("parses entries of every form", () => {
    expect(parseNetworkEntry("Example.COM.")).toMatchObject({ kind: "host", host: "example.com", wildcard: false });
    expect(parseNetworkEntry("*.example.com:8443")).toMatchObject({ kind: "host", host: "example.com", wildcard: true, port: 8443 });
    expect(parseNetworkEntry("0x7f000002")).toMatchObject({ kind: "ip" });
    expect(String((parseNetworkEntry("0x7f000002") as { ip: unknown }).ip)).toBe("127.0.0.2");
    expect(String((parseNetworkEntry("[::ffff:10.0.0.1]:22") as { ip: unknown }).ip)).toBe("10.0.0.1");
    expect(parseNetworkEntry("fd00::/8")).toMatchObject({ kind: "cidr" });
  });
});

describe("describeNetworkPolicy (deerflow doctor)", () => {
  it("names the mode, what is refused and how to open an intranet host", () => {
    const iso = describeNetworkPolicy(net(false));
    expect(iso).toMatchObject({ mode: "isolated", enforced: true });
    expect(iso.summary).toMatch(/^isolated — no network/);
    const open = describeNetworkPolicy(net({ mode: "open", allow_private: ["wiki.corp"] }));
    expect(open.summary).toMatch(/^open — public addresses through the egress proxy; this machine .* refused; allow_private: wiki\.corp/);
    expect(open.details.join("\n")).toMatch(/no UDP, no ICMP, no DNS/);
    expect(open.details.join("\n")).toMatch(/sandbox\.network\.allow_private/);
    const list = describeNetworkPolicy(net({ mode: "allowlist", allow: ["pypi.org"] }));
    expect(list.summary).toMatch(/^allowlist — only pypi\.org/);
    expect(list.allow).toEqual(["pypi.org"]);
  });

  it("says when the provider does not enforce it", () => {
    const d = describeNetworkPolicy(net("open"), "local");
    expect(d.enforced).toBe(false);
    expect(d.summary).toMatch(/not enforced: local provider/);
  });
});
