import ipaddr from "ipaddr.js";
import { z } from "zod";
import { normalizeHost, parseIpLiteral } from "../net";

/**
 * How far a bubblewrap sandbox reaches out:
 * - `isolated`: nothing (loopback inside the sandbox only);
 * - `allowlist`: the hosts named in `allow` (and `allow_private`), through the egress proxy;
 * - `open`: any public address, through the egress proxy.
 * In every mode this machine, private, link-local, CGNAT and metadata addresses are refused
 * unless `allow_private` names them.
 */
export const NETWORK_MODES = ["isolated", "allowlist", "open"] as const;

/** One of {@link NETWORK_MODES}. */
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** A parsed `allow` / `allow_private` entry. */
export type NetworkEntry =
  | { kind: "host"; text: string; host: string; wildcard: boolean; port?: number }
  | { kind: "ip"; text: string; ip: ipaddr.IPv4 | ipaddr.IPv6; port?: number }
  | { kind: "cidr"; text: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** The IPv4 address an IPv4-mapped IPv6 address stands for; others unchanged (entries compare on this). */
export function unmapAddress(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/**
 * Parse one `allow` / `allow_private` entry: a host name (`pypi.org`), a
 * subdomain wildcard (`*.pythonhosted.org`, not the apex), an IP in any form
 * (`10.0.0.5`, `2001:db8::1`), a CIDR (`10.20.0.0/16`), each optionally with
 * `:port` (IPv6 as `[2001:db8::1]:443`; CIDRs take no port).
 * @returns the entry, or an error text saying what was expected.
 */
export function parseNetworkEntry(raw: string): NetworkEntry | { error: string } {
  const text = raw.trim();
  if (!text) return { error: "empty entry" };
  if (text.includes("://") || (text.includes("/") && !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(text))) {
    return { error: `'${text}' is not a host, IP, CIDR or host:port (write 'example.com' or 'example.com:443', not a URL)` };
  }
  if (text.includes("/")) {
    try {
      const [ip, bits] = ipaddr.parseCIDR(text);
      return { kind: "cidr", text, range: [unmapAddress(ip), ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits] };
    } catch {
      return { error: `'${text}' is not a valid CIDR range (e.g. 10.20.0.0/16 or fd00::/8)` };
    }
  }
  let host = text;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    if (bracketed[2] !== undefined) {
      port = parsePort(bracketed[2]);
      if (port === undefined) return { error: `'${text}': port must be 1-65535` };
    }
    const ip = parseIpLiteral(host);
    if (!ip || ip.kind() !== "ipv6") return { error: `'${text}': brackets are only for IPv6 addresses` };
    return { kind: "ip", text, ip: unmapAddress(ip), port };
  }
  const colons = (text.match(/:/g) ?? []).length;
  if (colons === 1) {
    const at = text.lastIndexOf(":");
    host = text.slice(0, at);
    port = parsePort(text.slice(at + 1));
    if (port === undefined) return { error: `'${text}': port must be 1-65535` };
  }
  const ip = parseIpLiteral(host);
  if (ip) return { kind: "ip", text, ip: unmapAddress(ip), port };
  if (colons > 1) return { error: `'${text}' is not a valid IPv6 address (write [addr]:port for a port)` };
  const name = normalizeHost(host);
  const wildcard = name.startsWith("*.");
  const bare = wildcard ? name.slice(2) : name;
  const labels = bare.split(".");
  if (!bare || bare.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return { error: `'${text}' is not a valid host name (a '*.' prefix is the only wildcard allowed)` };
  }
  return { kind: "host", text, host: bare, wildcard, port };
}

const entryList = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? [])
  .superRefine((list, ctx) => {
    list.forEach((entry, i) => {
      const parsed = parseNetworkEntry(entry);
      if ("error" in parsed) ctx.addIssue({ code: "custom", path: [i], message: parsed.error });
    });
  });

const networkObjectSchema = z
  .object(
    {
      mode: z.enum(NETWORK_MODES, { error: `must be one of ${NETWORK_MODES.join(", ")} (or network: true / false)` }),
      /** allowlist mode: the destinations the sandbox may reach. */
      allow: entryList,
      /** Intranet exceptions: private addresses (or hosts resolving to them) the sandbox may reach. */
      allow_private: entryList,
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? `unknown key ${iss.keys.map((k) => `'${k}'`).join(", ")} (expected mode, allow, allow_private)`
          : "expected false, true, 'isolated', 'allowlist', 'open' or {mode, allow, allow_private}",
    },
  )
  .strict()
  .superRefine((n, ctx) => {
    if (n.mode !== "allowlist" && n.allow.length) {
      ctx.addIssue({ code: "custom", path: ["allow"], message: `only applies to mode 'allowlist' (mode is '${n.mode}')` });
    }
    if (n.mode === "isolated" && n.allow_private.length) {
      ctx.addIssue({ code: "custom", path: ["allow_private"], message: "has no effect in mode 'isolated' (nothing leaves the sandbox); pick 'allowlist' or 'open'" });
    }
    if (n.mode === "allowlist" && !n.allow.length && !n.allow_private.length) {
      ctx.addIssue({ code: "custom", path: ["allow"], message: "mode 'allowlist' needs at least one entry in allow (or allow_private): write network: {mode: allowlist, allow: [pypi.org, …]}" });
    }
  });

/** The parsed `sandbox.network` setting. */
export interface NetworkSettings {
  mode: NetworkMode;
  /** Raw `allow` entries (validated). */
  allow: string[];
  /** Raw `allow_private` entries (validated). */
  allow_private: string[];
}

/** The shorthand forms, as the object form they stand for. */
function expandShorthand(value: unknown): unknown {
  if (value === undefined || value === null || value === false) return { mode: "isolated" };
  if (value === true) return { mode: "open" };
  if (typeof value === "string") return { mode: value };
  return value;
}

/**
 * `sandbox.network`: `false` (= `isolated`, the default), `true` (= `open`,
 * what `network: true` meant before modes existed), a mode string, or
 * `{mode, allow, allow_private}`. Shorthands are expanded first, so every
 * error names the object key it is about.
 */
export const networkSettingSchema = z
  .preprocess(expandShorthand, networkObjectSchema)
  .transform((v): NetworkSettings => ({ mode: v.mode, allow: v.allow, allow_private: v.allow_private }))
  .default((): NetworkSettings => ({ mode: "isolated", allow: [], allow_private: [] }));

/** Parse validated entry strings (throws on an invalid one: validate with the schema first). */
export function parseNetworkEntries(list: readonly string[]): NetworkEntry[] {
  return list.map((raw) => {
    const e = parseNetworkEntry(raw);
    if ("error" in e) throw new Error(`invalid network entry: ${e.error}`);
    return e;
  });
}
