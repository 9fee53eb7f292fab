import type { NetworkMode, NetworkSettings } from "../../config/sandbox-network-config";

/** What `deerflow doctor` prints about the sandbox network. */
export interface NetworkPolicyDescription {
  mode: NetworkMode;
  /** False when the provider does not isolate commands (local: they run on the host with its network). */
  enforced: boolean;
  allow: string[];
  allow_private: string[];
  /** One line, e.g. `open — public addresses through the egress proxy; this machine and private ranges refused`. */
  summary: string;
  /** Further lines: what is refused, what non-HTTP traffic gets, how to open an intranet host. */
  details: string[];
}

/**
 * Describe the effective `sandbox.network` policy for `deerflow doctor`.
 * @param settings the parsed `sandbox.network` (`parseSandboxConfig(raw).network`)
 * @param provider the provider kind (`bwrap`, `local`); anything but `bwrap` does not enforce the policy
 */
export function describeNetworkPolicy(settings: NetworkSettings, provider = "bwrap"): NetworkPolicyDescription {
  const enforced = provider === "bwrap";
  const refused = "this machine (loopback, its own addresses, the gateway), private, link-local, CGNAT and metadata addresses are refused";
  const exceptions = settings.allow_private.length ? `; allow_private: ${settings.allow_private.join(", ")}` : "";
  let summary: string;
  if (settings.mode === "isolated") summary = "isolated — no network (only the sandbox's own loopback)";
  else if (settings.mode === "allowlist") summary = `allowlist — only ${settings.allow.join(", ") || "(allow_private entries)"} through the egress proxy; ${refused}${exceptions}`;
  else summary = `open — public addresses through the egress proxy; ${refused}${exceptions}`;
  const details: string[] = [];
  if (!enforced) {
    details.push(`the ${provider} provider runs commands on the host: sandbox.network is not enforced (they have the host's network)`);
  } else if (settings.mode === "isolated") {
    details.push("commands get their own network namespace with loopback only; no DNS, no TCP/UDP out");
  } else {
    details.push("commands keep their own network namespace; HTTP(S)_PROXY points at a forwarder to the host-side egress proxy, which resolves names and checks every address");
    details.push("non-HTTP traffic: TCP only through HTTP CONNECT to an allowed host:port; no UDP, no ICMP, no DNS from inside the sandbox");
    details.push("to reach an intranet host, add it (host, IP or CIDR) to sandbox.network.allow_private");
  }
  return { mode: settings.mode, enforced, allow: [...settings.allow], allow_private: [...settings.allow_private], summary: enforced ? summary : `${summary} (not enforced: ${provider} provider)`, details };
}
