import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { toolMessage } from "../messages";
import type { Message, ToolMessage } from "../messages";
import type { AgentMiddleware, ToolCallRequest, ToolCallResult } from "../runtime/types";
import { ensureRunSandbox, withKeyedLock } from "../sandbox";
import type { SandboxProvider } from "../sandbox";
import { Command, isCommand } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

/** Key of the read mark in a read_file ToolMessage's `additional_kwargs`. */
export const READ_MARK_KEY = "deerflow_read_mark";

/** A read mark: which file, at which content hash. */
export interface ReadMark {
  path: string;
  hash: string;
}

const READ_TOOLS = new Set(["read_file"]);
const GATED_TOOLS = new Set(["write_file", "str_replace"]);

/** DeerFlow's block text. */
export function readBeforeWriteBlockMessage(toolName: string, filePath: string): string {
  return (
    `Error: ${toolName} blocked — ${filePath} already exists and you have not read its current version. ` +
    "Any write invalidates earlier reads, so re-read before every modification. " +
    "Call read_file on it (a ranged read of the relevant section is enough, e.g. the last ~30 lines " +
    "before an append), check what is already there, then retry."
  );
}

/** sha256 of the UTF-8 content. */
export function contentHash(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

/** Hash of the newest read mark for `normPath` in `messages`, if any. */
export function latestMarkHash(messages: readonly Message[], normPath: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type !== "tool") continue;
    const mark = m.additional_kwargs?.[READ_MARK_KEY] as ReadMark | undefined;
    if (mark && typeof mark === "object" && mark.path === normPath) return typeof mark.hash === "string" ? mark.hash : undefined;
  }
  return undefined;
}

const optionsSchema = z
  .object({
    provider: z.custom<SandboxProvider>((v) => !!v && typeof (v as SandboxProvider).acquire === "function", "provider must be a SandboxProvider"),
    enabled: z.boolean().default(true),
  })
  .strict();

/** Options of {@link createReadBeforeWriteMiddleware}. */
export type ReadBeforeWriteMiddlewareOptions = z.input<typeof optionsSchema>;

/**
 * ReadBeforeWrite (DeerFlow chain #11): `read_file` stamps
 * `additional_kwargs.deerflow_read_mark = {path, hash}` (sha256 of the whole
 * current file) on its result; `write_file` onto an existing file (append or
 * overwrite) and `str_replace` are blocked unless the newest mark for that
 * path matches the file's current hash. Writes never refresh marks. Gate and
 * execution are serialised per (thread, path). A file that cannot be
 * inspected fails open (the tool reports its own error).
 */
export function createReadBeforeWriteMiddleware(options: ReadBeforeWriteMiddlewareOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("ReadBeforeWriteMiddleware", optionsSchema, options);
  const provider = opts.provider as SandboxProvider;

  const currentContent = async (request: ToolCallRequest, p: string): Promise<string | undefined> => {
    try {
      const sandbox = await ensureRunSandbox(provider, request.runtime.context);
      return await sandbox.readFile(p);
    } catch {
      return undefined; // missing or not inspectable → fail open
    }
  };

  const stamp = async (request: ToolCallRequest, p: string, result: ToolCallResult): Promise<ToolCallResult> => {
    const content = await currentContent(request, p);
    if (content === undefined) return result;
    const mark: ReadMark = { path: path.posix.normalize(p), hash: contentHash(content) };
    const mark1 = (m: ToolMessage): ToolMessage =>
      m.status === "error" ? m : { ...m, additional_kwargs: { ...m.additional_kwargs, [READ_MARK_KEY]: mark } };
    if (isCommand(result)) {
      const msgs = Array.isArray(result.update.messages) ? [...result.update.messages] : [];
      for (let i = msgs.length - 1; i >= 0; i--) {
        if ((msgs[i] as ToolMessage)?.type === "tool") {
          msgs[i] = mark1(msgs[i] as ToolMessage);
          break;
        }
      }
      return new Command({ update: { ...result.update, messages: msgs }, goto: result.goto, resume: result.resume });
    }
    return mark1(result as ToolMessage);
  };

  return {
    name: "ReadBeforeWriteMiddleware",
    async wrapToolCall(request, handler) {
      const name = request.toolCall.name;
      if (!opts.enabled || (!GATED_TOOLS.has(name) && !READ_TOOLS.has(name))) return handler(request);
      const p = request.toolCall.args?.path;
      if (typeof p !== "string" || p === "") return handler(request);
      const norm = path.posix.normalize(p);
      return withKeyedLock(`rbw:${request.runtime.threadId}:${norm}`, async () => {
        if (READ_TOOLS.has(name)) return stamp(request, p, await handler(request));
        const content = await currentContent(request, p);
        if (content !== undefined && latestMarkHash(request.state.messages, norm) !== contentHash(content)) {
          return toolMessage(readBeforeWriteBlockMessage(name, p), { tool_call_id: request.toolCall.id, name, status: "error" });
        }
        return handler(request);
      });
    },
  };
}
