import path from "node:path";
import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { withKeyedLock } from "../../sandbox";
import { descriptionField, errorResult, guarded, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

const schema = z.object({
  description: descriptionField,
  path: z.string().describe("The absolute path of the file to edit."),
  old_str: z.string().describe("The exact text to replace."),
  new_str: z.string().describe("The replacement text."),
  replace_all: z.boolean().default(false).describe("Replace every occurrence instead of only the first."),
});

/**
 * `str_replace(description, path, old_str, new_str, replace_all=false)`:
 * replaces the first occurrence (or all), under a per-(sandbox, path) lock.
 */
export function createStrReplaceTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "str_replace",
    description:
      "Replace text in a file: the first occurrence of old_str (or every occurrence with replace_all=true). " +
      "You must have read the file's current version with read_file first.",
    schema,
    metadata: sandboxToolMetadata("file:write"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        if (args.old_str === "") return "OK";
        const key = `str_replace:${sandbox.id}:${path.posix.normalize(args.path)}`;
        return withKeyedLock(key, async () => {
          const content = await sandbox.readFile(args.path);
          if (!content.includes(args.old_str)) return errorResult(`String to replace not found in file: ${args.path}`);
          const next = args.replace_all
            ? content.split(args.old_str).join(args.new_str)
            : content.replace(args.old_str, () => args.new_str);
          await sandbox.writeFile(args.path, next);
          return "OK";
        });
      }),
  });
}
