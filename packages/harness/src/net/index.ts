/**
 * Address policy shared by everything that reaches out or lets a sandbox
 * reach out: which hostnames and IP addresses are private, loopback,
 * link-local or metadata endpoints (web fetches refuse them; the sandbox's
 * egress allowlist is parsed and checked with the same rules).
 */
export { BLOCKED_HOSTNAMES, blockedAddressReason, embeddedIpv4, isBlockedAddress, isBlockedHostname, normalizeHost, parseIpLiteral } from "./ip-policy";
