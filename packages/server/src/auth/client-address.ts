import { BlockList, isIP } from "node:net";
import type { Context } from "hono";

/**
 * `AUTH_TRUSTED_PROXIES` (comma-separated IPs or CIDRs, as DeerFlow reads
 * it): the reverse proxies whose `X-Real-IP` / `X-Forwarded-Proto` are
 * believed. Empty = nobody's: any client could otherwise pick a fresh
 * address per request and never be throttled.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  private readonly any: boolean;
  /** Entries that are neither an IP nor a CIDR (reported once by the gateway). */
  readonly invalid: string[] = [];

  constructor(raw: string | undefined) {
    let any = false;
    for (const entry of (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
      const [addr, bits] = entry.split("/");
      const family = isIP(addr ?? "");
      const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
      if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
        this.invalid.push(entry);
        continue;
      }
      this.list.addSubnet(addr!, prefix, family === 6 ? "ipv6" : "ipv4");
      any = true;
    }
    this.any = any;
  }

  /** Whether the TCP peer `address` is a trusted proxy. */
  trusts(address: string | undefined): boolean {
    if (!this.any || !address) return false;
    const plain = address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    if (!family) return false;
    return this.list.check(plain, family === 6 ? "ipv6" : "ipv4");
  }
}

/** The TCP peer of a request served by `@hono/node-server` (unforgeable by the client), if known. */
export function peerAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/**
 * The client address login throttling counts against: the TCP peer, or the
 * `X-Real-IP` a trusted proxy set. `X-Forwarded-For` is never read (its
 * first hop is whatever the client wrote).
 */
export function clientAddress(c: Context, proxies: TrustedProxies): string {
  const peer = peerAddress(c);
  if (proxies.trusts(peer)) {
    const real = c.req.header("x-real-ip")?.trim();
    if (real && isIP(real)) return real;
  }
  return peer ?? "unknown";
}

/** Whether the client reached us over HTTPS (directly, or through a trusted proxy that says so). */
export function isSecureRequest(c: Context, proxies: TrustedProxies): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  if (!proxies.trusts(peerAddress(c))) return false;
  return c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";
}
