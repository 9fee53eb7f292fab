import path from "node:path";
import { z } from "zod";
import { errorMessage } from "../errors";
import { toolMessage } from "../messages";
import { ensureRunSandbox, VIRTUAL_OUTPUTS } from "../sandbox";
import type { Sandbox, SandboxProvider } from "../sandbox";
import { Command } from "../state";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";

/** DeerFlow's refusal for paths outside the outputs directory. */
export const PRESENT_FILES_OUTSIDE_MESSAGE = "Error: Only files in /mnt/user-data/outputs can be presented";

const schema = z.object({
  filepaths: z
    .array(z.string().min(1))
    .min(1)
    .describe("Absolute paths of files under /mnt/user-data/outputs to show to the user."),
});

/** Options of {@link createPresentFilesTool}. */
export interface PresentFilesOptions {
  /** When given, host output paths are accepted (mapped back) and existence is checked. */
  provider?: SandboxProvider;
}

/** Normalise one path to `/mnt/user-data/outputs/<rel>`, or undefined when it is outside outputs. */
export function normalizeOutputPath(p: string, sandbox?: Sandbox): string | undefined {
  const candidate = sandbox ? sandbox.maskPaths(p.trim()) : p.trim();
  if (!candidate.startsWith("/") || candidate.split("/").includes("..")) return undefined;
  const norm = path.posix.normalize(candidate);
  if (!norm.startsWith(`${VIRTUAL_OUTPUTS}/`) || norm.length <= VIRTUAL_OUTPUTS.length + 1) return undefined;
  return norm;
}

/**
 * `present_files(filepaths)`: shows files under /mnt/user-data/outputs to
 * the user by adding them to `artifacts`. Returns a Command with
 * `{artifacts, messages:[ToolMessage("Successfully presented files")]}`.
 */
export function createPresentFilesTool(options: PresentFilesOptions = {}): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "present_files",
    description:
      "Make files visible to the user for viewing and download. Only files in /mnt/user-data/outputs can be presented; " +
      "write deliverables there first.",
    schema,
    metadata: { group: "builtin", requiresSandbox: options.provider !== undefined },
    execute: async (args, runtime) => {
      let sandbox: Sandbox | undefined;
      try {
        if (options.provider) sandbox = await ensureRunSandbox(options.provider, runtime.context);
      } catch (err) {
        return { content: `Error: ${errorMessage(err)}`, status: "error" };
      }
      const paths: string[] = [];
      for (const p of args.filepaths) {
        const norm = normalizeOutputPath(p, sandbox);
        if (!norm) return { content: PRESENT_FILES_OUTSIDE_MESSAGE, status: "error" };
        if (sandbox) {
          const st = await sandbox.stat(norm).catch(() => null);
          if (!st?.isFile) return { content: `Error: File not found: ${norm}`, status: "error" };
        }
        if (!paths.includes(norm)) paths.push(norm);
      }
      return new Command({
        update: {
          artifacts: paths,
          messages: [toolMessage("Successfully presented files", { tool_call_id: runtime.toolCallId, name: "present_files" })],
        },
      });
    },
  });
}
