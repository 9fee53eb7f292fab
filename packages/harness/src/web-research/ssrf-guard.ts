import dns from "node:dns";
import { BlockedUrlError } from "./errors";
import { blockedAddressReason, isBlockedHostname, normalizeHost, parseIpLiteral } from "../net";

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to every address it has. The default asks the
 * system resolver; tests inject one to simulate rebinding or a public-looking
 * name that points at 127.0.0.1. It is set in code only, never from config.
 */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`dns.lookup` with every address, in resolver order). */
export const systemResolver: HostResolver = async (hostname) => {
  const rows = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return rows.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

/** A URL that passed the guard, with the addresses the connection must use. */
export interface CheckedTarget {
  url: URL;
  /** Checked addresses; the request connects only to these (no second lookup). */
  addresses: ResolvedAddress[];
}

/** Decides whether a URL may be fetched and which addresses it may connect to. */
export interface UrlGuard {
  /** True when private/loopback targets are allowed (`allow_private_addresses: true`). */
  readonly allowPrivateAddresses: boolean;
  /** Check one URL (every redirect hop is checked again). Throws {@link BlockedUrlError}. */
  check(url: string | URL): Promise<CheckedTarget>;
}

/** Options of {@link createUrlGuard}. */
export interface UrlGuardOptions {
  /** DeerFlow's per-tool `allow_private_addresses` opt-in for intranet targets. */
  allowPrivateAddresses?: boolean;
  /** Host resolver (defaults to {@link systemResolver}). */
  resolver?: HostResolver;
  /**
   * Test seam, code only: these fake host names may resolve to a loopback
   * address (where test servers listen). Literal loopback URLs, `localhost`
   * and every other name stay refused, so the other rules remain testable.
   */
  testLoopbackHosts?: readonly string[];
}

/**
 * The SSRF guard shared by every tool that fetches a URL coming from the
 * model or from fetched content: only http/https; `localhost`,
 * `metadata.google.internal` and friends refused by name; the host resolved
 * and refused when any address is loopback, private, link-local, CGNAT,
 * multicast, reserved or a metadata address (IPv4 and IPv6, including
 * IPv4-mapped/translated forms; decimal, octal and hex literals are parsed).
 * The checked addresses are returned so the caller pins the connection to
 * them: a name cannot resolve to a public address for the check and to a
 * private one for the connect.
 */
export function createUrlGuard(options: UrlGuardOptions = {}): UrlGuard {
  const allowPrivate = options.allowPrivateAddresses === true;
  const resolver = options.resolver ?? systemResolver;
  const testLoopback = new Set((options.testLoopbackHosts ?? []).map(normalizeHost));
  return {
    allowPrivateAddresses: allowPrivate,
    async check(input) {
      let url: URL;
      try {
        url = typeof input === "string" ? new URL(input) : input;
      } catch {
        throw new BlockedUrlError(`Invalid URL: ${String(input).slice(0, 200)}. URLs must include the scheme, e.g. https://example.com`, { reason: "invalid_url" });
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new BlockedUrlError(`Only http:// and https:// URLs are supported (got ${url.protocol})`, { reason: "scheme" });
      }
      const host = normalizeHost(url.hostname);
      if (!host) throw new BlockedUrlError("URL host could not be parsed", { reason: "host" });
      if (!allowPrivate && isBlockedHostname(host)) {
        throw new BlockedUrlError(`Refusing to fetch '${host}': a local or metadata host name`, { reason: "hostname", host });
      }
      const literal = parseIpLiteral(host);
      let addresses: ResolvedAddress[];
      if (literal) {
        addresses = [{ address: literal.toString(), family: literal.kind() === "ipv6" ? 6 : 4 }];
      } else {
        try {
          addresses = await resolver(host);
        } catch (err) {
          throw new BlockedUrlError(`URL host '${host}' could not be resolved`, { reason: "dns", host, cause: String(err) });
        }
        if (addresses.length === 0) throw new BlockedUrlError(`URL host '${host}' could not be resolved`, { reason: "dns", host });
      }
      if (!allowPrivate) {
        for (const a of addresses) {
          const ip = parseIpLiteral(a.address);
          const reason = ip ? blockedAddressReason(ip) : "unparseable address";
          if (reason === "loopback" && !literal && testLoopback.has(host)) continue;
          if (reason) {
            throw new BlockedUrlError(`Refusing to fetch '${host}': it resolves to a private, loopback or metadata address (${reason})`, { reason: "address", host, range: reason });
          }
        }
      }
      return { url, addresses };
    },
  };
}
