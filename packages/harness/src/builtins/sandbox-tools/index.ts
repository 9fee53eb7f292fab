import type { ToolDefinition } from "../../tools";
import { createBashTool } from "./bash";
import { createGlobTool } from "./glob";
import { createGrepTool } from "./grep";
import { createLsTool } from "./ls";
import { createReadFileTool } from "./read-file";
import { resolveConfig } from "./shared";
import type { SandboxToolOptions } from "./shared";
import { createStrReplaceTool } from "./str-replace";
import { createWriteFileTool } from "./write-file";

/** Options of {@link createSandboxTools}. */
export interface CreateSandboxToolsOptions extends SandboxToolOptions {
  /**
   * Include `bash`. Default: true, except for the local provider with
   * `allow_host_bash: false` (DeerFlow drops the bash tool there).
   */
  includeBash?: boolean;
}

/** The sandbox tools: bash, ls, glob, grep, read_file, write_file, str_replace. */
export function createSandboxTools(options: CreateSandboxToolsOptions): ToolDefinition[] {
  const config = resolveConfig(options.config);
  const opts = { provider: options.provider, config };
  const includeBash = options.includeBash ?? (options.provider.kind !== "local" || config.allow_host_bash);
  const tools: ToolDefinition[] = [];
  if (includeBash) tools.push(createBashTool(opts));
  tools.push(
    createLsTool(opts),
    createGlobTool(opts),
    createGrepTool(opts),
    createReadFileTool(opts),
    createWriteFileTool(opts),
    createStrReplaceTool(opts),
  );
  return tools;
}

export { createBashTool, formatCommandResult } from "./bash";
export { createGlobTool, GLOB_MAX_RESULTS_BOUND } from "./glob";
export { createGrepTool, GREP_MAX_RESULTS_BOUND } from "./grep";
export { createLsTool } from "./ls";
export { createReadFileTool, decodeText, selectLines, splitLines } from "./read-file";
export { createStrReplaceTool } from "./str-replace";
export { createWriteFileTool, DEFAULT_WRITE_FILE_MAX_BYTES, writeFileMaxBytes } from "./write-file";
export { descriptionField, errorResult, guarded, sandboxToolMetadata, toolSandbox } from "./shared";
export type { SandboxToolOptions } from "./shared";
