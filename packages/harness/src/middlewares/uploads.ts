import { contentText } from "../messages";
import { ORIGINAL_USER_CONTENT_KEY } from "./input-sanitization";
import { lstat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { ContentBlock, HumanMessage, Message } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { threadDirs, VIRTUAL_UPLOADS } from "../sandbox";
import { threadStateSchema } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z
  .object({
    base_dir: z.string().min(1),
  })
  .strict();

/** Options of {@link createUploadsMiddleware}. */
export type UploadsMiddlewareOptions = z.input<typeof optionsSchema>;

/** One file announced for the current message (`state.uploaded_files`). */
export interface UploadedFile {
  filename: string;
  size: number;
  /** Virtual path. */
  path: string;
  extension: string;
}

/** Opening tag of the injected block. */
export const CURRENT_UPLOADS_TAG = "<current_uploads>";

function fileName(entry: unknown): string | undefined {
  if (typeof entry === "string") return entry;
  if (entry && typeof entry === "object") {
    const name = (entry as { filename?: unknown; name?: unknown }).filename ?? (entry as { name?: unknown }).name;
    if (typeof name === "string") return name;
  }
  return undefined;
}

/** The `<current_uploads>` block for some files. */
export function formatCurrentUploads(files: UploadedFile[]): string {
  const lines = ["<current_uploads>", "The following files were uploaded with this message:", ""];
  for (const f of files) {
    lines.push(`- ${f.filename} (${(f.size / 1024).toFixed(1)} KB)`, `  Path: ${f.path}`);
  }
  lines.push("", "Use the `read_file` tool (or bash) with the paths above to work with them.", "</current_uploads>");
  return lines.join("\n");
}

function withBlock(content: HumanMessage["content"], block: string): HumanMessage["content"] {
  if (typeof content === "string") return `${block}\n\n${content}`;
  return [{ type: "text", text: block } as ContentBlock, ...content];
}

function alreadyInjected(content: HumanMessage["content"]): boolean {
  if (typeof content === "string") return content.startsWith(CURRENT_UPLOADS_TAG);
  const first = content[0] as { type?: string; text?: unknown } | undefined;
  return first?.type === "text" && typeof first.text === "string" && first.text.startsWith(CURRENT_UPLOADS_TAG);
}

/**
 * Uploads (DeerFlow chain #5): reads `additional_kwargs.files` of the last
 * human message, keeps the regular files that really exist in the thread's
 * uploads directory (symlinks and odd names are ignored), prepends a
 * `<current_uploads>` block to that message and sets `uploaded_files`
 * (`[]` when there are none). Older uploads are found with `list_uploaded_files`.
 */
export function createUploadsMiddleware(options: UploadsMiddlewareOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("UploadsMiddleware", optionsSchema, options);
  return {
    name: "UploadsMiddleware",
    stateSchema: { uploaded_files: threadStateSchema.uploaded_files },
    async beforeAgent(state, runtime) {
      const messages = state.messages as Message[];
      let last: HumanMessage | undefined;
      for (let i = messages.length - 1; i >= 0; i--) {
        if (messages[i].type === "human") {
          last = messages[i] as HumanMessage;
          break;
        }
      }
      const raw = last?.additional_kwargs?.files;
      if (!last || !Array.isArray(raw) || raw.length === 0) return { uploaded_files: [] };
      const { userId } = runtime.context.identity;
      const dirs = threadDirs(opts.base_dir, runtime.threadId, userId);
      const files: UploadedFile[] = [];
      for (const entry of raw) {
        const name = fileName(entry);
        if (!name || name !== path.basename(name) || name.startsWith(".") || name.includes("\0")) continue;
        const st = await lstat(path.join(dirs.uploads, name)).catch(() => null);
        if (!st?.isFile()) continue;
        if (files.some((f) => f.filename === name)) continue;
        files.push({ filename: name, size: st.size, path: `${VIRTUAL_UPLOADS}/${name}`, extension: path.extname(name).slice(1).toLowerCase() });
      }
      if (files.length === 0) return { uploaded_files: [] };
      if (alreadyInjected(last.content)) return { uploaded_files: files };
      // Record the user's own words first, so InputSanitization frames only them (not our server-made block).
      const kwargs = { ...(last.additional_kwargs ?? {}) };
      if (typeof kwargs[ORIGINAL_USER_CONTENT_KEY] !== "string") kwargs[ORIGINAL_USER_CONTENT_KEY] = contentText(last.content);
      const updated: HumanMessage = { ...last, content: withBlock(last.content, formatCurrentUploads(files)), additional_kwargs: kwargs };
      return { uploaded_files: files, messages: [updated] };
    },
  };
}
