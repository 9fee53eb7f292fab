import { lookup } from "node:dns/promises";
import net from "node:net";
import { isLoopbackIp, isWildcardAddress } from "./hosts";

/** What binding to an address exposes. */
export interface BindExposure {
  /** Only this machine can connect (every address is loopback). */
  loopback: boolean;
  /** The addresses the name stands for (`["0.0.0.0"]` for a wildcard). */
  addresses: string[];
}

/**
 * Whether listening on `host` keeps the gateway to this machine: an IP
 * literal is loopback only in 127.0.0.0/8 and ::1; a wildcard (`0.0.0.0`,
 * `::`) is every interface; a name is resolved (as `listen` would) and is
 * loopback only when all its addresses are.
 */
export async function bindHostExposure(host: string): Promise<BindExposure> {
  const h = host.trim().replace(/^\[|\]$/g, "");
  if (isWildcardAddress(h)) return { loopback: false, addresses: [h || "0.0.0.0"] };
  if (net.isIP(h)) return { loopback: isLoopbackIp(h), addresses: [h] };
  let addresses: string[];
  try {
    addresses = (await lookup(h, { all: true })).map((a) => a.address);
  } catch {
    // a name that does not resolve cannot be bound either; listen reports that error
    return { loopback: false, addresses: [] };
  }
  return { loopback: addresses.length > 0 && addresses.every(isLoopbackIp), addresses };
}
