/**
 * What a web page, a document in a thread or a foreign client can reach:
 * the Host allowlist, the origin rule with CORS, JSON-only bodies, the
 * headers of served thread files, and host paths kept out of responses.
 */
export { RequestGuard } from "./guard";
export type { RequestGuardSettings } from "./guard";
export { HostAllowlist, isLoopbackHostname, isLoopbackIp, isWildcardAddress, LOOPBACK_HOSTS, machineHostnames, parseHostPort } from "./hosts";
export type { HostPort } from "./hosts";
export { corsHeaders, normalizeOrigin, originRefusal, SAFE_METHODS } from "./origin";
export { assertJsonContentType, assertMultipart, isJsonMediaType, mediaType } from "./content-type";
export { API_SECURITY_HEADERS, contentDisposition, FILE_CSP, servedFile } from "./served-files";
export type { ServedFile } from "./served-files";
export { HostPathMasker, publicStateValues, publicStreamData, VIRTUAL_THREAD_DATA } from "./host-paths";
export { bindHostExposure } from "./bind";
export type { BindExposure } from "./bind";
