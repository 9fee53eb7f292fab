/**
 * Sandbox network: the `sandbox.network` setting, the egress policy (the
 * SSRF guard's address rules applied to every resolved address), the
 * host-side egress proxy on a Unix socket and the in-sandbox forwarder that
 * reaches it. See docs/sandbox.md ("Network").
 */
export { NETWORK_MODES, networkSettingSchema, parseNetworkEntry, parseNetworkEntries } from "../../config/sandbox-network-config";
export type { NetworkEntry, NetworkMode, NetworkSettings } from "../../config/sandbox-network-config";
export { classifyAddress, EgressPolicy, interfaceAddresses } from "./policy";
export type { AddressClass, EgressAllowed, EgressDecision, EgressPolicyOptions, EgressRefused } from "./policy";
export { EgressProxy } from "./proxy";
export type { EgressProxyOptions } from "./proxy";
export { SandboxEgress } from "./egress";
export type { EgressCommandParts, SandboxEgressOptions } from "./egress";
export { FORWARDER_PORT, SANDBOX_NET_DIR, networkEnv } from "./forwarder";
export { describeNetworkPolicy } from "./describe";
export { protectedHostPorts, protectHostPort } from "./host-services";
export type { NetworkPolicyDescription } from "./describe";
