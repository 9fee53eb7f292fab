/**
 * HTTPS through the pinned connection: the socket goes to the checked
 * address while TLS still verifies the certificate against the URL's host
 * name (SNI and hostname check are not affected by the custom lookup).
 * Needs openssl to make a throwaway certificate; skipped with a notice otherwise.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUrlGuard, httpRequest } from "../../src/web-research";

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const OPENSSL = hasOpenssl();
if (!OPENSSL) console.warn("[https-pinning] SKIPPED: openssl not found");

describe.skipIf(!OPENSSL)("HTTPS with a pinned address", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "df-tls-"));
  let server: https.Server;
  let port: number;
  let cert: Buffer;
  beforeAll(async () => {
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=site.test", "-addext", "subjectAltName=DNS:site.test"], { stdio: "ignore" });
    cert = fs.readFileSync(path.join(dir, "cert.pem"));
    server = https.createServer({ key: fs.readFileSync(path.join(dir, "key.pem")), cert }, (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("secure page"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const resolver = async (h: string) => (h === "site.test" || h === "other.test" ? [{ address: "127.0.0.1", family: 4 as const }] : []);

  it("connects to the checked address and verifies the certificate for the URL's host", async () => {
    const guard = createUrlGuard({ resolver, testLoopbackHosts: ["site.test", "other.test"] });
    const res = await httpRequest(`https://site.test:${port}/`, { guard, timeoutMs: 5000, maxBytes: 1e6, ca: cert });
    expect(res.body.toString()).toBe("secure page");
    // Same address, different name: the certificate does not match, so TLS refuses.
    await expect(httpRequest(`https://other.test:${port}/`, { guard, timeoutMs: 5000, maxBytes: 1e6, ca: cert })).rejects.toThrow(/altnames|certificate|Hostname/i);
  });
});
