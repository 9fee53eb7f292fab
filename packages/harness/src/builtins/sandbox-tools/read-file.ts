import { z } from "zod";
import { tool } from "../../tools";
import type { ToolDefinition } from "../../tools";
import { truncateReadFile } from "../../sandbox";
import { descriptionField, errorResult, guarded, resolveConfig, sandboxToolMetadata } from "./shared";
import type { SandboxToolOptions } from "./shared";

const schema = z.object({
  description: descriptionField,
  path: z.string().describe("The absolute path to the file to read."),
  start_line: z.number().int().min(1).nullish().describe("Optional 1-based first line to read (inclusive)."),
  end_line: z.number().int().min(1).nullish().describe("Optional 1-based last line to read (inclusive)."),
});

/** Decode text, or return undefined for binary content (NUL bytes or invalid UTF-8). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, 8192).includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Python's `str.splitlines()` for \n and \r\n. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Apply a 1-based inclusive line range (DeerFlow semantics). */
export function selectLines(content: string, start?: number | null, end?: number | null): string {
  if (start == null && end == null) return content;
  const lines = splitLines(content);
  const from = start ?? 1;
  if (from > lines.length) return "(start_line exceeds file length)";
  const to = end == null ? lines.length : Math.min(end, lines.length);
  return lines.slice(from - 1, to).join("\n");
}

/**
 * `read_file(description, path, start_line?, end_line?)`: 1-based inclusive
 * ranges, `(empty)` for empty content, binary files rejected (suggesting
 * bash or view_image), head-truncated at `read_file_output_max_chars`.
 */
export function createReadFileTool(options: SandboxToolOptions): ToolDefinition<z.output<typeof schema>> {
  const config = resolveConfig(options.config);
  return tool({
    name: "read_file",
    description: "Read the contents of a text file. Use start_line/end_line (1-based, inclusive) to read a range of a large file.",
    schema,
    metadata: sandboxToolMetadata("file:read"),
    execute: (args, runtime) =>
      guarded(options.provider, runtime, async (sandbox) => {
        if (args.start_line != null && args.end_line != null && args.end_line < args.start_line) {
          return errorResult("end_line must be greater than or equal to start_line");
        }
        const text = decodeText(await sandbox.readFileBytes(args.path));
        if (text === undefined) {
          return errorResult(
            `${args.path} appears to be a binary file and cannot be read as text. ` +
              "Use bash (e.g. `file`, `xxd`, `head -c`) to inspect it, or view_image for images.",
          );
        }
        const selected = selectLines(text, args.start_line, args.end_line);
        if (selected === "") return "(empty)";
        return truncateReadFile(selected, config.read_file_output_max_chars);
      }),
  });
}
