import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { truncateMiddle } from "../../sandbox";
import type { ExecuteResult } from "../../sandbox";
import { descriptionField, guarded, resolveConfig, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

const schema = z.object({
  description: descriptionField,
  command: z.string().min(1).describe("The bash command to execute. Use absolute /mnt/user-data/... paths."),
});

/** Render a command result the way DeerFlow does (stdout, `Std Error:`, `Exit Code: N`). */
export function formatCommandResult(res: ExecuteResult, timeoutSeconds: number): string {
  let output = res.stdout;
  if (res.stderr) output += output ? `\nStd Error:\n${res.stderr}` : `Std Error:\n${res.stderr}`;
  if (res.timedOut) output += `${output ? "\n" : ""}[Command timed out after ${timeoutSeconds} seconds and was terminated]`;
  if (res.exitCode !== 0) output += `${output ? "\n" : ""}Exit Code: ${res.exitCode}`;
  return output || "(no output)";
}

/**
 * `bash(description, command)`: runs in the thread sandbox with the workspace
 * as cwd, `bash_command_timeout` (600 s), output middle-truncated at
 * `bash_output_max_chars` (20000).
 */
export function createBashTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  const config = resolveConfig(options.config);
  return tool({
    name: "bash",
    description:
      "Execute a bash command in the sandbox. The working directory is /mnt/user-data/workspace; " +
      "files the user uploaded are in /mnt/user-data/uploads and deliverables go to /mnt/user-data/outputs.",
    schema,
    metadata: sandboxToolMetadata("bash"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        const res = await sandbox.executeCommand(args.command, {
          timeoutMs: config.bash_command_timeout * 1000,
          signal: runtime.signal,
        });
        const text = sandbox.maskPaths(formatCommandResult(res, config.bash_command_timeout));
        return truncateMiddle(text, config.bash_output_max_chars);
      }),
  });
}
