import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { descriptionField, guarded, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

/** Upper bound of `max_results` for grep. */
export const GREP_MAX_RESULTS_BOUND = 500;

const schema = z.object({
  description: descriptionField,
  pattern: z.string().min(1).describe("Regular expression (or literal text with literal=true) to search for."),
  path: z.string().describe("Absolute file or directory to search."),
  glob: z.string().nullish().describe("Only search files matching this glob (e.g. `*.ts`)."),
  literal: z.boolean().default(false),
  case_sensitive: z.boolean().default(false),
  max_results: z.number().int().default(100).describe(`Maximum matching lines to return (≤ ${GREP_MAX_RESULTS_BOUND}).`),
});

/** `grep(description, pattern, path, glob=None, literal=false, case_sensitive=false, max_results=100)`; bound 500. */
export function createGrepTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "grep",
    description: "Search file contents for a pattern in a single file or a directory tree. Returns `path:line: text` lines.",
    schema,
    metadata: sandboxToolMetadata("file:read"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        const max = Math.min(Math.max(1, args.max_results), GREP_MAX_RESULTS_BOUND);
        const res = await sandbox.grep(args.path, args.pattern, {
          glob: args.glob ?? undefined,
          literal: args.literal,
          caseSensitive: args.case_sensitive,
          maxResults: max,
        });
        if (res.items.length === 0) return `No matches found for '${args.pattern}' under ${args.path}`;
        let text = res.items.map((m) => `${m.path}:${m.line}: ${m.text}`).join("\n");
        if (res.truncated) text += `\n... [results truncated at ${max} matches; narrow the pattern, path or glob]`;
        return sandbox.maskPaths(text);
      }),
  });
}
