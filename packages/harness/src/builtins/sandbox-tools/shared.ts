import { z } from "zod";
import { DeerFlowError, errorMessage } from "../../errors";
import { ensureRunSandbox, parseSandboxConfig } from "../../sandbox";
import type { Sandbox, SandboxConfig, SandboxConfigInput, SandboxProvider } from "../../sandbox";
import type { ToolResult, ToolRuntime } from "../../tools";

/** Options shared by every sandbox tool factory. */
export interface SandboxToolOptions {
  provider: SandboxProvider;
  /** The `sandbox:` config section (raw or parsed); limits and timeouts come from here. */
  config?: SandboxConfig | SandboxConfigInput;
}

/** The `description` argument every sandbox tool takes first. */
export const descriptionField = z
  .string()
  .describe("Explain why you are performing this action in short words. ALWAYS PROVIDE THIS PARAMETER FIRST.");

/** Metadata marking a tool that needs the thread sandbox (the Sandbox middleware acquires it). */
export function sandboxToolMetadata(group: string): Record<string, unknown> {
  return { group, requiresSandbox: true };
}

/** Parse the config option once per factory. */
export function resolveConfig(config: SandboxToolOptions["config"]): SandboxConfig {
  return parseSandboxConfig(config ?? {});
}

/** The run's sandbox (lazily acquired). */
export function toolSandbox(provider: SandboxProvider, runtime: ToolRuntime): Promise<Sandbox> {
  return ensureRunSandbox(provider, runtime.context);
}

/** An error tool result: `Error: …` with host paths masked. */
export function errorResult(message: string, sandbox?: Sandbox): ToolResult {
  const text = message.startsWith("Error:") ? message : `Error: ${message}`;
  return { content: sandbox ? sandbox.maskPaths(text) : text, status: "error" };
}

/**
 * Run a tool body; expected failures (DeerFlow errors, fs errors) become
 * `Error: …` results instead of exceptions.
 */
export async function guarded(
  provider: SandboxProvider,
  runtime: ToolRuntime,
  body: (sandbox: Sandbox) => Promise<ToolResult>,
): Promise<ToolResult> {
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await toolSandbox(provider, runtime);
    return await body(sandbox);
  } catch (err) {
    if (err instanceof DeerFlowError || err instanceof Error) return errorResult(errorMessage(err), sandbox);
    return errorResult(String(err), sandbox);
  }
}
