import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { truncateLs } from "../../sandbox";
import { descriptionField, guarded, resolveConfig, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

const schema = z.object({
  description: descriptionField,
  path: z.string().describe("The absolute path to the directory to list."),
});

/** `ls(description, path)`: tree up to 2 levels (directories end with `/`), head-truncated at `ls_output_max_chars`. */
export function createLsTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  const config = resolveConfig(options.config);
  return tool({
    name: "ls",
    description: "List the contents of a directory up to 2 levels deep in tree format.",
    schema,
    metadata: sandboxToolMetadata("file:read"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        const entries = await sandbox.listDir(args.path, 2);
        if (entries.length === 0) return "(empty)";
        const text = entries.map((e) => `${"  ".repeat(e.depth - 1)}${e.path}${e.isDir ? "/" : ""}`).join("\n");
        return truncateLs(sandbox.maskPaths(text), config.ls_output_max_chars);
      }),
  });
}
