import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlockedUrlError, createUrlGuard, httpRequest } from "../../src/web-research";
import type { HostResolver } from "../../src/web-research";
import { startPageServer } from "../../src/testing/web-doubles";
import type { WebDouble } from "../../src/testing/web-doubles";

const PUBLIC = "93.184.216.34";

/** A resolver answering from a table (each name may have a queue of answers for rebinding). */
function tableResolver(table: Record<string, string[] | string[][]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const state = new Map<string, number>();
  const fn = (async (host: string) => {
    calls.push(host);
    const entry = table[host];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    const answers = Array.isArray(entry[0]) ? (entry as string[][]) : [entry as string[]];
    const i = state.get(host) ?? 0;
    state.set(host, i + 1);
    return answers[Math.min(i, answers.length - 1)].map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  }) as HostResolver & { calls: string[] };
  fn.calls = calls;
  return fn;
}

describe("SSRF guard: every address form is refused", () => {
  const guard = createUrlGuard({ resolver: tableResolver({}) });
  const blocked = [
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://127.0.0.1.:8080/admin",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.100.100.200/latest/meta-data/",
    "http://224.0.0.1/",
    "http://0.0.0.0/",
    "http://255.255.255.255/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://[::127.0.0.1]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://app.localhost/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata.google.internal./",
  ];
  it.each(blocked)("refuses %s", async (url) => {
    await expect(guard.check(url)).rejects.toBeInstanceOf(BlockedUrlError);
  });

  it.each(["file:///etc/passwd", "ftp://example.com/x", "gopher://example.com/", "javascript:alert(1)", "data:text/html,hi"])("refuses the scheme of %s", async (url) => {
    await expect(guard.check(url)).rejects.toThrow(/Only http:\/\/ and https:\/\//);
  });

  it("refuses a malformed URL and a name that does not resolve", async () => {
    await expect(guard.check("not a url")).rejects.toThrow(/Invalid URL/);
    await expect(guard.check("https://nowhere.test/")).rejects.toThrow(/could not be resolved/);
  });
});

describe("SSRF guard: names are resolved and every answer is checked", () => {
  const resolver = tableResolver({
    "public.test": [PUBLIC],
    "evil.test": ["127.0.0.1"],
    "mixed.test": [PUBLIC, "10.1.2.3"],
    "v6evil.test": ["::ffff:169.254.169.254"],
    "cgnat.test": ["100.64.3.4"],
  });
  const guard = createUrlGuard({ resolver });

  it("accepts a public name and returns the checked addresses for pinning", async () => {
    const t = await guard.check("https://public.test/page");
    expect(t.addresses).toEqual([{ address: PUBLIC, family: 4 }]);
  });
  it.each(["evil.test", "mixed.test", "v6evil.test", "cgnat.test"])("refuses %s, a public-looking name with a private answer", async (host) => {
    await expect(guard.check(`https://${host}/`)).rejects.toThrow(/private, loopback or metadata address/);
  });
  it("allow_private_addresses opts one tool in (loopback, localhost, metadata)", async () => {
    const open = createUrlGuard({ allowPrivateAddresses: true, resolver });
    await expect(open.check("http://127.0.0.1:8080/")).resolves.toMatchObject({ addresses: [{ address: "127.0.0.1" }] });
    await expect(open.check("http://evil.test/")).resolves.toBeTruthy();
    expect(open.allowPrivateAddresses).toBe(true);
  });
  it("the loopback test seam applies only to the named fake host, never to literals or other names", async () => {
    const seam = createUrlGuard({ resolver: tableResolver({ "site.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] }), testLoopbackHosts: ["site.test"] });
    await expect(seam.check("http://site.test/")).resolves.toBeTruthy();
    await expect(seam.check("http://other.test/")).rejects.toBeInstanceOf(BlockedUrlError);
    await expect(seam.check("http://127.0.0.1/")).rejects.toBeInstanceOf(BlockedUrlError);
    await expect(seam.check("http://localhost/")).rejects.toBeInstanceOf(BlockedUrlError);
  });
});

describe("SSRF guard on real connections: redirects and rebinding", () => {
  let site: WebDouble;
  let secret: WebDouble;
  beforeAll(async () => {
    secret = await startPageServer({ "/": { headers: { "content-type": "text/plain" }, body: "metadata-secret" } });
    const secretPort = new URL(secret.url).port;
    site = await startPageServer({
      "/ok": { headers: { "content-type": "text/plain" }, body: "public page" },
      "/to-literal": { redirect: `http://127.0.0.1:${secretPort}/` },
      "/to-metadata": { redirect: "http://169.254.169.254/latest/meta-data/" },
      "/to-decimal": { redirect: `http://2130706433:${secretPort}/` },
      "/to-mapped": { redirect: `http://[::ffff:127.0.0.1]:${secretPort}/` },
      "/to-internal-name": { redirect: `http://internal.test:${secretPort}/` },
      "/to-file": { redirect: "file:///etc/passwd" },
      "/loop": { redirect: "/loop2" },
      "/loop2": { redirect: "/loop" },
    });
  });
  afterAll(async () => {
    await site.close();
    await secret.close();
  });
  const port = () => new URL(site.url).port;
  const seamGuard = (resolver: HostResolver) => createUrlGuard({ resolver, testLoopbackHosts: ["site.test"] });

  it("fetches a permitted page and re-checks every redirect hop", async () => {
    const resolver = tableResolver({ "site.test": ["127.0.0.1"], "internal.test": ["127.0.0.1"] });
    const guard = seamGuard(resolver);
    const ok = await httpRequest(`http://site.test:${port()}/ok`, { guard, timeoutMs: 2000, maxBytes: 1e6 });
    expect(ok.body.toString()).toBe("public page");
    for (const path of ["/to-literal", "/to-metadata", "/to-decimal", "/to-mapped", "/to-internal-name", "/to-file"]) {
      await expect(httpRequest(`http://site.test:${port()}${path}`, { guard, timeoutMs: 2000, maxBytes: 1e6 }), path).rejects.toBeInstanceOf(BlockedUrlError);
    }
    expect(secret.requests).toHaveLength(0);
  });

  it("stops after 5 redirects", async () => {
    const guard = seamGuard(tableResolver({ "site.test": ["127.0.0.1"] }));
    await expect(httpRequest(`http://site.test:${port()}/loop`, { guard, timeoutMs: 2000, maxBytes: 1e6 })).rejects.toMatchObject({ kind: "too_many_redirects" });
  });

  it("DNS rebinding: the connection uses the checked answer, never a second lookup", async () => {
    // First answer: the permitted test site; any later answer: a private address.
    const resolver = tableResolver({ "site.test": [["127.0.0.1"], ["10.9.9.9"]] });
    const res = await httpRequest(`http://site.test:${port()}/ok`, { guard: seamGuard(resolver), timeoutMs: 2000, maxBytes: 1e6 });
    expect(res.body.toString()).toBe("public page");
    expect(resolver.calls).toEqual(["site.test"]);
  });
});
