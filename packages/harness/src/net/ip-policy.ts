import ipaddr from "ipaddr.js";

/**
 * Host names refused without looking them up: they name the machine itself
 * or a cloud metadata service whatever the resolver answers.
 */
export const BLOCKED_HOSTNAMES: readonly string[] = Object.freeze(["localhost", "metadata.google.internal", "metadata", "instance-data"]);

/** Normalise a URL host for comparisons: lower case, IPv6 brackets and one trailing root dot removed. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return h;
}

/** True for `localhost`, `*.localhost` and the metadata host names. */
export function isBlockedHostname(host: string): boolean {
  const h = normalizeHost(host);
  return BLOCKED_HOSTNAMES.includes(h) || h.endsWith(".localhost");
}

/**
 * Parse an IP literal in any form a URL parser or `inet_aton` accepts
 * (dotted, decimal `2130706433`, hex `0x7f000001`, octal `0177.0.0.1`,
 * short `127.1`, IPv6 with or without brackets). Undefined for host names.
 */
export function parseIpLiteral(host: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const h = normalizeHost(host);
  if (!h) return undefined;
  if (h.includes(":")) return ipaddr.IPv6.isValid(h) ? ipaddr.IPv6.parse(h) : undefined;
  // ipaddr's IPv4 parser understands the octal/hex/long forms; a name like
  // `cafe.com` is not valid and stays a host name.
  return ipaddr.IPv4.isValid(h) ? ipaddr.IPv4.parse(h) : undefined;
}

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64, 6to4, compatible), if any. */
export function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = ip.range();
  const b = ip.toByteArray();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return new ipaddr.IPv4(b.slice(12, 16));
  if (range === "6to4") return new ipaddr.IPv4(b.slice(2, 6));
  return undefined;
}

/** Why an address is refused (its range name), or undefined when it is public unicast. */
export function blockedAddressReason(ip: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    const bytes = v6.toByteArray();
    // ::/96 holds ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d form,
    // which some stacks still route to the embedded IPv4 address.
    if (bytes.slice(0, 12).every((x) => x === 0)) return "ipv4-compatible or unspecified IPv6";
    const inner = embeddedIpv4(v6);
    if (inner) {
      const r = inner.range();
      return r === "unicast" ? undefined : `${v6.range()} ${r}`;
    }
    const range = v6.range();
    return range === "unicast" ? undefined : range;
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === "unicast" ? undefined : range;
}

/** True when `address` (a resolved IP string) must not be connected to. Unparseable input is blocked. */
export function isBlockedAddress(address: string): boolean {
  const ip = parseIpLiteral(address);
  return !ip || blockedAddressReason(ip) !== undefined;
}
