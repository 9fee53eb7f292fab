import os from "node:os";
import ipaddr from "ipaddr.js";
import { blockedAddressReason, embeddedIpv4, isBlockedHostname, normalizeHost, parseIpLiteral } from "../../net";
import { systemResolver } from "../../web-research/ssrf-guard";
import type { HostResolver, ResolvedAddress } from "../../web-research/ssrf-guard";
import { parseNetworkEntries, unmapAddress } from "../../config/sandbox-network-config";
import { protectedHostPorts } from "./host-services";
import type { NetworkEntry, NetworkSettings } from "../../config/sandbox-network-config";

/**
 * How an address may be opened:
 * - `public`: reachable in `open` mode (in `allowlist` mode when the destination is listed);
 * - `private`: RFC 1918, unique-local, CGNAT, reserved… — any covering `allow_private` entry (IP, CIDR, host name);
 * - `machine`: loopback and every address of this machine's interfaces (where the gateway and other
 *   host services listen) — only an `allow_private` entry naming that exact IP and a port;
 * - `link-local`: 169.254/16 and fe80::/10, home of the cloud metadata services — only an exact IP entry;
 * - `never`: unspecified (0.0.0.0, ::), multicast, broadcast, IPv4-compatible and translated IPv6 forms
 *   that embed a non-public address.
 */
export type AddressClass = "public" | "private" | "machine" | "link-local" | "never";

/** The class of `ip` and the range name behind it (the SSRF guard's rule). */
export function classifyAddress(ip: ipaddr.IPv4 | ipaddr.IPv6, localAddresses: ReadonlySet<string>): { cls: AddressClass; range: string } {
  const addr = unmapAddress(ip);
  const reason = blockedAddressReason(ip);
  if (addr.range() === "loopback") return { cls: "machine", range: "loopback" };
  if (localAddresses.has(addr.toString())) return { cls: "machine", range: addr.range() === "unicast" ? "an address of this machine" : addr.range() };
  if (reason === undefined) return { cls: "public", range: "public" };
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    // NAT64, 6to4, IPv4-translated and IPv4-compatible forms leave this machine through a translator:
    // they are never an intranet host's address, so no entry opens them.
    if (embeddedIpv4(v6) || v6.toByteArray().slice(0, 12).every((b) => b === 0)) return { cls: "never", range: reason };
  }
  const range = addr.range();
  if (range === "unspecified" || range === "broadcast" || range === "multicast") return { cls: "never", range };
  if (range === "loopback") return { cls: "machine", range };
  if (range === "linkLocal") return { cls: "link-local", range };
  return { cls: "private", range };
}

/** Every address of this machine's interfaces (unmapped text form). */
export function interfaceAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      const ip = parseIpLiteral(a.address.split("%")[0]);
      if (ip) out.add(unmapAddress(ip).toString());
    }
  }
  return out;
}

/** A destination the proxy may connect to, with the checked addresses to use (no second lookup). */
export interface EgressAllowed {
  allowed: true;
  host: string;
  port: number;
  addresses: ResolvedAddress[];
}

/** A refused destination: HTTP status for the client and a text naming the setting. */
export interface EgressRefused {
  allowed: false;
  host: string;
  port: number;
  /** 403 for a policy refusal, 400 for a malformed target, 502 when the name does not resolve. */
  status: 400 | 403 | 502;
  /** What the sandboxed client reads (response body). */
  message: string;
}

/** The outcome of {@link EgressPolicy.check}. */
export type EgressDecision = EgressAllowed | EgressRefused;

/** Options of {@link EgressPolicy}. */
export interface EgressPolicyOptions {
  /** Host resolver (default: the system resolver). Set in code only (tests simulate rebinding with it). */
  resolver?: HostResolver;
  /** This machine's addresses (default: {@link interfaceAddresses}, read on every check so new interfaces count). */
  localAddresses?: () => ReadonlySet<string>;
  /** Bound on one lookup (default 10 s). */
  resolveTimeoutMs?: number;
  /** Ports of DeerFlow's own services on this machine, refused on its addresses in every case (default {@link protectedHostPorts}). */
  protectedPorts?: () => ReadonlySet<number>;
  /**
   * Names resolved at once by this policy, over every sandbox using it (default 2). Why: the system
   * resolver (`getaddrinfo`) holds one of libuv's 4 pool threads per lookup, the threads the gateway's
   * file operations run on, and a sandbox chooses the names: slow ones by the dozen would stall every
   * thread's file access for as long as the lookups take. Waiting counts against `resolveTimeoutMs`.
   */
  maxConcurrentLookups?: number;
}

/** Runs at most `max` lookups at once; a queued one whose caller gave up is never started. */
class LookupLimiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly max: number) {}

  run<T>(task: () => Promise<T>, abandoned: () => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        if (abandoned()) return reject(new Error("lookup abandoned"));
        this.active++;
        task()
          .then(resolve, reject)
          .finally(() => {
            this.active--;
            this.next();
          });
      };
      if (this.active < this.max) start();
      else this.queue.push(start);
    });
  }

  private next(): void {
    while (this.active < this.max && this.queue.length > 0) (this.queue.shift() as () => void)();
  }
}

const PREFIX = "deerflow sandbox network:";
const PRIVATE_HINT =
  "The sandbox never reaches this machine, private, link-local or metadata addresses; to let it reach an intranet host, add that host (or its IP / CIDR) to sandbox.network.allow_private in config.yaml.";
const EXACT_HINT =
  "This machine's own addresses open only for an exact IP and port in sandbox.network.allow_private (e.g. 127.0.0.2:8080), link-local ones only for an exact IP (a host name or CIDR opens neither).";

function portMatches(entry: NetworkEntry, port: number): boolean {
  return entry.kind === "cidr" || entry.port === undefined || entry.port === port;
}

function nameMatches(entry: NetworkEntry, host: string, port: number): boolean {
  if (entry.kind !== "host" || !portMatches(entry, port)) return false;
  return entry.wildcard ? host.endsWith(`.${entry.host}`) : host === entry.host;
}

function addressMatches(entry: NetworkEntry, ip: ipaddr.IPv4 | ipaddr.IPv6, port: number, withCidr: boolean): boolean {
  if (!portMatches(entry, port)) return false;
  const addr = unmapAddress(ip);
  if (entry.kind === "ip") return entry.ip.kind() === addr.kind() && entry.ip.toString() === addr.toString();
  if (entry.kind === "cidr" && withCidr) return entry.range[0].kind() === addr.kind() && addr.match(entry.range);
  return false;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The sandbox egress policy: which `host:port` the egress proxy may connect
 * to, and at which addresses. The host is resolved here (the sandbox has no
 * DNS) and EVERY address is checked with the SSRF guard's address rules;
 * one refused address refuses the request, and the connection then uses
 * only the checked addresses, so a name cannot pass the check with one
 * answer and connect with another. In `allowlist` mode a name that matches
 * no entry is refused before it is resolved (the sandbox cannot make the
 * host send DNS queries for names it chose).
 */
export class EgressPolicy {
  readonly settings: NetworkSettings;
  private readonly allow: NetworkEntry[];
  private readonly allowPrivate: NetworkEntry[];
  private readonly resolver: HostResolver;
  private readonly localAddresses: () => ReadonlySet<string>;
  private readonly resolveTimeoutMs: number;
  private readonly protectedPorts: () => ReadonlySet<number>;
  private readonly lookups: LookupLimiter;

  constructor(settings: NetworkSettings, options: EgressPolicyOptions = {}) {
    this.settings = settings;
    this.allow = parseNetworkEntries(settings.allow);
    this.allowPrivate = parseNetworkEntries(settings.allow_private);
    this.resolver = options.resolver ?? systemResolver;
    this.localAddresses = options.localAddresses ?? interfaceAddresses;
    this.resolveTimeoutMs = options.resolveTimeoutMs ?? 10_000;
    this.protectedPorts = options.protectedPorts ?? protectedHostPorts;
    this.lookups = new LookupLimiter(Math.max(1, options.maxConcurrentLookups ?? 2));
  }

  /** Decide whether the sandbox may reach `host:port` (host as in a URL or CONNECT line, brackets allowed). */
  async check(rawHost: string, port: number): Promise<EgressDecision> {
    const host = normalizeHost(rawHost);
    const target = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
    const refuse = (status: EgressRefused["status"], message: string): EgressRefused => ({ allowed: false, host, port, status, message: `${PREFIX} refused ${target}: ${message}\n` });
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) return refuse(400, "not a valid host and port.");
    if (this.settings.mode === "isolated") return refuse(403, "sandbox.network is 'isolated' (no network).");
    const literal = parseIpLiteral(host);
    // Anything but an IP literal must look like a DNS name before it goes anywhere near the resolver.
    if (!literal && !/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/.test(host)) return refuse(400, "not a valid host name or IP address.");
    const privateByName = !literal && this.allowPrivate.some((e) => nameMatches(e, host, port));
    if (this.settings.mode === "allowlist") {
      const listed = literal
        ? [...this.allow, ...this.allowPrivate].some((e) => addressMatches(e, literal, port, true))
        : [...this.allow, ...this.allowPrivate].some((e) => nameMatches(e, host, port));
      if (!listed) {
        return refuse(403, `not in sandbox.network.allow (mode 'allowlist'). Add '${host}' (or '${host}:${port}') to sandbox.network.allow in config.yaml to let the sandbox reach it.`);
      }
    }
    if (!literal && !privateByName && isBlockedHostname(host)) return refuse(403, `'${host}' names this machine or a metadata service. ${PRIVATE_HINT}`);
    let addresses: ResolvedAddress[];
    if (literal) {
      const addr = unmapAddress(literal);
      addresses = [{ address: addr.toString(), family: addr.kind() === "ipv6" ? 6 : 4 }];
    } else {
      try {
        let gaveUp = false;
        const lookup = this.lookups.run(() => this.resolver(host), () => gaveUp);
        addresses = await withTimeout(lookup, this.resolveTimeoutMs, `resolving ${host}`).catch((err: unknown) => {
          gaveUp = true;
          lookup.catch(() => undefined);
          throw err;
        });
      } catch (err) {
        return refuse(502, `'${host}' could not be resolved (${err instanceof Error ? err.message : String(err)}).`);
      }
      if (addresses.length === 0) return refuse(502, `'${host}' could not be resolved.`);
    }
    const local = this.localAddresses();
    const checked: ResolvedAddress[] = [];
    for (const a of addresses) {
      const ip = parseIpLiteral(a.address);
      if (!ip) return refuse(403, `'${host}' resolved to an unparseable address (${a.address}).`);
      const { cls, range } = classifyAddress(ip, local);
      if (cls === "machine" && this.protectedPorts().has(port)) {
        return refuse(403, `port ${port} of this machine is DeerFlow's own gateway; the sandbox can never reach it (no sandbox.network setting opens it).`);
      }
      const exact = this.allowPrivate.some((e) => addressMatches(e, ip, port, false));
      let ok: boolean;
      if (cls === "public") ok = true;
      else if (cls === "never") ok = false;
      else if (cls === "private") ok = exact || privateByName || this.allowPrivate.some((e) => addressMatches(e, ip, port, true));
      // This machine also runs services that reach the gateway for the user (a frontend or reverse proxy in
      // front of it, databases, other tools): an entry opens one of its ports, never all of them.
      else if (cls === "machine") ok = this.allowPrivate.some((e) => e.kind === "ip" && e.port !== undefined && addressMatches(e, ip, port, false));
      else ok = exact;
      if (!ok) {
        const shown = literal ? `${unmapAddress(ip).toString()} is` : `'${host}' resolves to ${unmapAddress(ip).toString()},`;
        if (cls === "never") return refuse(403, `${shown} a ${range} address, which the sandbox can never reach (no sandbox.network setting opens it).`);
        const hint = cls === "machine" || cls === "link-local" ? `${PRIVATE_HINT} ${EXACT_HINT}` : PRIVATE_HINT;
        return refuse(403, `${shown} a ${cls === "machine" ? "this-machine" : cls} address (${range}). ${hint}`);
      }
      const addr = unmapAddress(ip);
      checked.push({ address: addr.toString(), family: addr.kind() === "ipv6" ? 6 : 4 });
    }
    return { allowed: true, host, port, addresses: checked };
  }
}
