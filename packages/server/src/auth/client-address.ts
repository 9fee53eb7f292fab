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

/** The 8 groups of a valid IPv6 address (`isIP(a) === 6`), an embedded IPv4 tail included. */
function ipv6Groups(address: string): number[] {
  const [head = "", tail] = address.split("::");
  const parse = (part: string): number[] =>
    part
      .split(":")
      .filter(Boolean)
      .flatMap((g) => {
        if (!g.includes(".")) return [parseInt(g, 16)];
        const [a = 0, b = 0, c = 0, d = 0] = g.split(".").map(Number);
        return [(a << 8) | b, (c << 8) | d];
      });
  const h = parse(head);
  const t = tail === undefined ? [] : parse(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/**
 * The key login throttling counts a client address under. An IPv4 address
 * as it is, also when spelled IPv4-mapped (`::ffff:198.51.100.4`, how a
 * dual-stack socket or a proxy may write it); an IPv6 address by its /64:
 * one host or home network is routinely given a whole /64, so counting
 * single addresses would let it take a fresh one for every guess.
 */
export function throttleAddressKey(address: string): string {
  const plain = address.replace(/%.*$/, ""); // a zone id names the interface, not the client
  const family = isIP(plain);
  if (family !== 6) return family === 4 ? plain : address;
  const g = ipv6Groups(plain.toLowerCase());
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join(".");
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(":")}::/64`;
}

/** {@link clientAddress} as the key login throttling counts it under ({@link throttleAddressKey}). */
export function throttleAddress(c: Context, proxies: TrustedProxies): string {
  return throttleAddressKey(clientAddress(c, proxies));
}

/** Whether the client reached us over HTTPS (directly, or through a trusted proxy that says so). */
export function isSecureRequest(c: Context, proxies: TrustedProxies): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  if (!proxies.trusts(peerAddress(c))) return false;
  return c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";
}
