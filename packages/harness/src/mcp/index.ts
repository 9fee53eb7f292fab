/**
 * MCP subsystem: servers from extensions_config.json as tools (`{server}_{tool}`)
 * over stdio, SSE and streamable HTTP (official SDK client), the session pool,
 * OAuth token injection, deferred tools and `tool_search`, the launch of
 * stdio servers (own directory, clean environment, own bubblewrap sandbox)
 * and the checks the gateway applies to configs it receives. See docs/mcp.md.
 */
export { McpPool } from "./pool";
export type { McpPoolOptions, McpScope, McpServerFailure, McpServerStatus } from "./pool";
export { mcpFailureFix, mcpFailureLine, mcpFailureLines } from "./failure-report";
export type { McpFailureFacts } from "./failure-report";
export { checkMcpServers } from "./launch-check";
export type { McpLaunchCheck, McpLaunchCheckOptions } from "./launch-check";
export type { McpConfigSource } from "./config-source";
export { McpConnection, transportKind } from "./connection";
export type { McpConnectOptions, McpToolInfo } from "./connection";
export { McpError } from "./errors";
export { OAuthTokenManager, oauthFetch } from "./oauth";
export type { FetchLike } from "./oauth";
export { sanitizeToolSchema } from "./schema-sanitize";
export { convertCallToolResult } from "./result-convert";
export type { McpCallResult, McpToolResult } from "./result-convert";
export { MAX_PATH_CHECKS, rewritePathsInText, toVirtualPath } from "./path-mapping";
export type { McpPathScope } from "./path-mapping";
export { createMcpToolDefinition, isMcpTool, MCP_TOOL_NAME, mcpToolName } from "./tool-adapter";
export type { McpToolMetadata } from "./tool-adapter";
export { effectiveRouting, mcpRoutingHints } from "./routing";
export type { McpRoutingConfig, McpRoutingHint } from "./routing";
export {
  assembleDeferredTools,
  createToolSearchTool,
  DeferredToolCatalog,
  deferredRoutingIndex,
  functionSchema,
  routingHintsOf,
  TOOL_SEARCH_MAX_RESULTS,
  TOOL_SEARCH_TOOL_NAME,
} from "./tool-search";
export type { DeferredToolSetup, FunctionSchema } from "./tool-search";
export { allowedStdioCommands, arbitraryExecFlag, CODE_INJECTING_ENV, DEFAULT_MCP_STDIO_COMMANDS, MCP_STDIO_ALLOWLIST_ENV, validateStdioLaunch } from "./launch-validation";
export type { StdioLaunchSpec } from "./launch-validation";
export {
  atomicWriteJson,
  MASKED_VALUE,
  maskServerEntry,
  mcpConfigResponse,
  mergePreservingSecrets,
  normalizeServerEntry,
  readRawExtensionsConfig,
  setMcpServerEnabled,
  writeMcpServers,
} from "./config-file";
export type { McpConfigResponse, McpEntryValidator } from "./config-file";
export { guardApiSubmittedEntry, MCP_API_ENV_ALLOWLIST_KEY } from "./api-guard";
export { isSensitiveKey, maskArgs, maskUrlsIn, restoreMaskedArgs, restoreMaskedUrl } from "./secret-mask";
export { planStdioLaunch, sandboxOptOut } from "./launch-plan";
export type { LaunchScope, McpLaunchSettings, StdioLaunch } from "./launch-plan";
export { ensureMcpServerDirs, MCP_SERVERS_DIR, mcpServerDirName, mcpServerDirs, removeThreadServerDirs } from "./server-dirs";
export type { McpServerDirs } from "./server-dirs";
export { buildMcpSandboxLaunch, MCP_SANDBOX_CACHE, MCP_SANDBOX_HOME, MCP_SANDBOX_ROOT, mcpBwrapOptions } from "./sandboxed-launch";
export type { McpSandboxLaunch, McpSandboxSpec } from "./sandboxed-launch";
export { LaunchedStdioTransport } from "./stdio-transport";
export type { LaunchedProcessSpec } from "./stdio-transport";
export { attachMcp, mcpConfigPath, readMcpConfig, updateMcpConfig } from "./attach";
export type { McpAttachment, McpHost } from "./attach";
