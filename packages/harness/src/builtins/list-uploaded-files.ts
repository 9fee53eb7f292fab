import path from "node:path";
import { z } from "zod";
import { errorMessage } from "../errors";
import { ensureRunSandbox, VIRTUAL_UPLOADS } from "../sandbox";
import type { Sandbox, SandboxProvider } from "../sandbox";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";

/** Most headings shown per file outline. */
const OUTLINE_MAX_LINES = 20;

const schema = z.object({
  include_outline: z
    .union([z.boolean(), z.array(z.string())])
    .default(false)
    .describe("true for every file, or a list of file names, to include a heading outline of Markdown files."),
  max_results: z.number().int().min(1).max(100).default(20).describe("Maximum files to list (≤ 100)."),
});

/** Options of {@link createListUploadedFilesTool}. */
export interface ListUploadedFilesOptions {
  provider: SandboxProvider;
}

/** Human size: `x.y KB` / `x.y MB`. */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / 1024).toFixed(1)} KB`;
}

async function outline(sandbox: Sandbox, p: string): Promise<string[]> {
  if (!/\.(md|markdown)$/i.test(p)) return [];
  try {
    const text = await sandbox.readFile(p);
    return text
      .split(/\r?\n/)
      .filter((l) => /^#{1,6}\s/.test(l))
      .slice(0, OUTLINE_MAX_LINES);
  } catch {
    return [];
  }
}

/** Names of files uploaded with the current message (`state.uploaded_files`). */
function currentUploadNames(state: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  const list = state.uploaded_files;
  if (Array.isArray(list)) {
    for (const f of list) {
      const name = (f as { filename?: unknown })?.filename;
      if (typeof name === "string") out.add(name);
    }
  }
  return out;
}

/**
 * `list_uploaded_files(include_outline=false, max_results=20)`: files uploaded
 * earlier in the thread (the current message's files, already announced in
 * `<current_uploads>`, are excluded). Staging files (`.upload-*.part`) and
 * hidden files are never listed.
 */
export function createListUploadedFilesTool(options: ListUploadedFilesOptions): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "list_uploaded_files",
    description: "List files the user uploaded earlier in this conversation (in /mnt/user-data/uploads).",
    schema,
    metadata: { group: "builtin", requiresSandbox: true },
    execute: async (args, runtime) => {
      try {
        const sandbox = await ensureRunSandbox(options.provider, runtime.context);
        const exclude = currentUploadNames(runtime.state);
        const entries = await sandbox.listDir(VIRTUAL_UPLOADS, 1);
        const files: Array<{ name: string; path: string; size: number; mtime: number }> = [];
        for (const e of entries) {
          const name = path.posix.basename(e.path);
          if (e.isDir || name.startsWith(".") || exclude.has(name)) continue;
          const st = await sandbox.stat(e.path);
          if (st?.isFile) files.push({ name, path: e.path, size: st.size, mtime: st.mtimeMs });
        }
        if (files.length === 0) return "No previously uploaded files found.";
        files.sort((a, b) => b.mtime - a.mtime || a.name.localeCompare(b.name));
        const shown = files.slice(0, args.max_results);
        const wantOutline = (name: string) =>
          args.include_outline === true || (Array.isArray(args.include_outline) && args.include_outline.includes(name));
        const lines = [`Previously uploaded files (${files.length}):`];
        for (const f of shown) {
          lines.push(`- ${f.name} (${formatSize(f.size)})`, `  Path: ${f.path}`);
          if (wantOutline(f.name)) for (const h of await outline(sandbox, f.path)) lines.push(`    ${h}`);
        }
        if (files.length > shown.length) lines.push(`... and ${files.length - shown.length} more (raise max_results to see them)`);
        return lines.join("\n");
      } catch (err) {
        return { content: `Error: ${errorMessage(err)}`, status: "error" };
      }
    },
  });
}
