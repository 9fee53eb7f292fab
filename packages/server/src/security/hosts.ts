import net from "node:net";
import os from "node:os";

/** A host name with an optional port, normalised (lower case, IPv6 in brackets and compressed). */
export interface HostPort {
  /** `localhost`, `127.0.0.1`, `[::1]` (the URL standard's `hostname`). */
  hostname: string;
  /** The port, `undefined` when the text had none. */
  port?: number;
}

const AUTHORITY_CHARS = /^[A-Za-z0-9._~%!$&'()*+,;=:[\]-]+$/;

/**
 * Parse a `Host` header value or an `allowed_hosts` entry (`name`,
 * `name:port`, `1.2.3.4`, `[::1]:2026`, and a bare IPv6 address for config
 * entries). Normalisation is the URL standard's (case, IDNA, IPv4 and IPv6
 * forms), the same parser browsers use, so two spellings of one host
 * compare equal. Anything that is not just a host (user info, path, query)
 * is `undefined`.
 */
export function parseHostPort(raw: string, { bareIpv6 = false } = {}): HostPort | undefined {
  let text = raw.trim();
  if (!text) return undefined;
  // config entries may spell an IPv6 address without brackets (`::1`); a Host header never does
  if (bareIpv6 && !text.startsWith("[") && (text.match(/:/g)?.length ?? 0) >= 2) text = `[${text}]`;
  if (!AUTHORITY_CHARS.test(text) || text.includes("@")) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return undefined;
  const explicitPort = /:(\d+)$/.exec(text);
  const hostname = url.hostname.replace(/\.$/, "");
  if (!hostname) return undefined;
  return { hostname, port: explicitPort ? Number(explicitPort[1]) : undefined };
}

/** Addresses that mean "every interface of this machine" when bound. */
export function isWildcardAddress(host: string): boolean {
  const h = host.trim().replace(/^\[|\]$/g, "");
  return h === "" || h === "0.0.0.0" || h === "::" || h === "0:0:0:0:0:0:0:0";
}

/** Whether an IP literal (brackets allowed) is loopback: 127.0.0.0/8, `::1`, or 127.x written IPv4-mapped. */
export function isLoopbackIp(ip: string): boolean {
  const v = ip.replace(/^\[|\]$/g, "").toLowerCase();
  if (net.isIPv4(v)) return v.startsWith("127.");
  if (!net.isIPv6(v)) return false;
  if (v === "::1" || v === "0:0:0:0:0:0:0:1") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v);
  return !!mapped && mapped[1].startsWith("127.");
}

/** Whether a URL's `hostname` names this machine only: `localhost` or a loopback IP literal. */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname.toLowerCase() === "localhost" || isLoopbackIp(hostname);
}

/** The names every gateway answers to: the loopback names. */
export const LOOPBACK_HOSTS: readonly string[] = Object.freeze(["localhost", "127.0.0.1", "[::1]"]);

/** This machine's interface addresses and host name (what "bound to 0.0.0.0 / ::" is reachable as). */
export function machineHostnames(): string[] {
  const names: string[] = [];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) names.push(a.family === "IPv6" || String(a.family) === "6" ? `[${a.address.replace(/%.*$/, "")}]` : a.address);
  }
  names.push(os.hostname());
  return names;
}

/** What the Host allowlist is built from. */
export interface HostAllowlistInput {
  /** The address the server is bound to (`start({host})`), once known. */
  bindHost?: string;
  /** `server.allowed_hosts` of config.yaml plus the `allowedHosts` gateway option. */
  extra: readonly string[];
}

/**
 * The `Host` names a gateway answers to: the loopback names, the bind
 * address (for a wildcard bind, every interface address and the machine's
 * host name), and the configured extras. An entry without a port matches
 * any port; one with a port only that port.
 */
export class HostAllowlist {
  private readonly anyPort = new Set<string>();
  private readonly withPort = new Set<string>();
  private readonly wildcard: boolean;
  private machine = new Set<string>();
  /** Entries of `extra` that could not be parsed (reported once by the caller). */
  readonly invalid: string[] = [];

  constructor(input: HostAllowlistInput) {
    for (const h of LOOPBACK_HOSTS) this.add(h);
    this.wildcard = input.bindHost !== undefined && isWildcardAddress(input.bindHost);
    if (input.bindHost !== undefined && !this.wildcard) this.add(input.bindHost, true);
    for (const h of input.extra) if (!this.add(h, true)) this.invalid.push(h);
    if (this.wildcard) this.refreshMachine();
  }

  private add(entry: string, bareIpv6 = false): boolean {
    const hp = parseHostPort(entry, { bareIpv6 });
    if (!hp) return false;
    if (hp.port === undefined) this.anyPort.add(hp.hostname);
    else this.withPort.add(`${hp.hostname}:${hp.port}`);
    return true;
  }

  private refreshMachine(): void {
    this.machine = new Set(machineHostnames().map((n) => parseHostPort(n, { bareIpv6: true })?.hostname).filter((n): n is string => !!n));
  }

  private matches(hp: HostPort, port: number): boolean {
    return this.anyPort.has(hp.hostname) || this.withPort.has(`${hp.hostname}:${port}`) || (this.wildcard && this.machine.has(hp.hostname));
  }

  /**
   * Whether a `Host` header value is allowed. `defaultPort` is the port a
   * header without one means (80 for http). For a wildcard bind the
   * interface addresses are read again once on a miss, so an address that
   * appeared after start (DHCP, a new VPN link) is recognised.
   */
  allows(hostHeader: string, defaultPort = 80): boolean {
    const hp = parseHostPort(hostHeader);
    if (!hp) return false;
    const port = hp.port ?? defaultPort;
    if (this.matches(hp, port)) return true;
    if (!this.wildcard) return false;
    this.refreshMachine();
    return this.matches(hp, port);
  }
}
