import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { descriptionField, guarded, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

/** Upper bound of `max_results` for glob. */
export const GLOB_MAX_RESULTS_BOUND = 1000;

const schema = z.object({
  description: descriptionField,
  pattern: z.string().min(1).describe("Glob pattern relative to `path`, e.g. `**/*.py`."),
  path: z.string().describe("Absolute directory to search in."),
  include_dirs: z.boolean().default(false).describe("Also return matching directories."),
  max_results: z.number().int().default(200).describe(`Maximum number of paths to return (≤ ${GLOB_MAX_RESULTS_BOUND}).`),
});

/** `glob(description, pattern, path, include_dirs=false, max_results=200)`; bound 1000. */
export function createGlobTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "glob",
    description: "Find files (and optionally directories) whose path matches a glob pattern under a directory.",
    schema,
    metadata: sandboxToolMetadata("file:read"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        const max = Math.min(Math.max(1, args.max_results), GLOB_MAX_RESULTS_BOUND);
        const res = await sandbox.glob(args.path, args.pattern, { includeDirs: args.include_dirs, maxResults: max });
        if (res.items.length === 0) return `No files matched pattern '${args.pattern}' under ${args.path}`;
        let text = res.items.join("\n");
        if (res.truncated) text += `\n... [results truncated at ${max} matches; narrow the pattern or path]`;
        return sandbox.maskPaths(text);
      }),
  });
}
