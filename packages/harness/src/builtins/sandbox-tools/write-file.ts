import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { descriptionField, errorResult, guarded, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

/** Default cap of a single non-append write (80 KiB). */
export const DEFAULT_WRITE_FILE_MAX_BYTES = 80 * 1024;

/** The active cap: env `DEERFLOW_WRITE_FILE_MAX_BYTES` (≤ 0 disables), else 80 KiB. */
export function writeFileMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.DEERFLOW_WRITE_FILE_MAX_BYTES;
  if (raw === undefined || raw.trim() === "") return DEFAULT_WRITE_FILE_MAX_BYTES;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) ? n : DEFAULT_WRITE_FILE_MAX_BYTES;
}

const schema = z.object({
  description: descriptionField,
  path: z.string().describe("The absolute path of the file to write."),
  content: z.string().describe("The content to write."),
  append: z.boolean().default(false).describe("Append to the file instead of overwriting it."),
});

/** `write_file(description, path, content, append=false)`: creates parents, 80 KiB non-append cap, returns `OK`. */
export function createWriteFileTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "write_file",
    description:
      "Write text to a file, creating parent directories. Overwrites unless append=true. " +
      "If the file already exists you must have read its current version with read_file first.",
    schema,
    metadata: sandboxToolMetadata("file:write"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        const max = writeFileMaxBytes();
        const size = Buffer.byteLength(args.content, "utf8");
        if (!args.append && max > 0 && size > max) {
          return errorResult(
            `write_file content is ${size} bytes, over the ${max}-byte limit for a single non-append write. ` +
              "Write the first part, then add the rest with append=true in further calls.",
          );
        }
        await sandbox.writeFile(args.path, args.content, { append: args.append });
        return "OK";
      }),
  });
}
