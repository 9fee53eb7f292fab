import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { ContentBlock, Message, MessageContent, ToolMessage } from "../messages";
import type { AgentMiddleware, ToolCallRequest, ToolCallResult } from "../runtime/types";
import { Command, isCommand } from "../state";
import { renderToolOutputPreview } from "./tool-output-budget-synopsis";
import { parseMiddlewareOptions } from "./zod-options";

/** Virtual outputs root as the model sees it inside the sandbox. */
export const VIRTUAL_OUTPUTS_BASE = "/mnt/user-data/outputs";

const nonNegInt = z.number().int().min(0);

/** DeerFlow's `tool_output:` config section. */
export const toolOutputOptionsSchema = z.object({
  enabled: z.boolean().default(true),
  externalize_min_chars: nonNegInt.default(12000),
  preview_head_chars: nonNegInt.default(2000),
  preview_tail_chars: nonNegInt.default(1000),
  fallback_max_chars: nonNegInt.default(30000),
  fallback_head_chars: nonNegInt.default(8000),
  fallback_tail_chars: nonNegInt.default(3000),
  storage_subdir: z
    .string()
    .min(1)
    .refine((s) => !path.isAbsolute(s) && !s.split(/[\\/]/).includes(".."), "must be a relative path without '..'")
    .default(".tool-results"),
  exempt_tools: z.array(z.string()).default(["read_file", "read_file_tool"]),
  tool_overrides: z.record(z.string(), nonNegInt).nullish().transform((v) => v ?? {}),
});

/** Options of {@link createToolOutputBudgetMiddleware} (the `tool_output:` section). */
export type ToolOutputBudgetOptions = z.input<typeof toolOutputOptionsSchema>;
type Config = z.output<typeof toolOutputOptionsSchema>;

const EXT_MAP: Record<string, string> = { bash: "log", bash_tool: "log", web_fetch: "log" };

/** Plain text of tool content; null for multimodal content (which is never budgeted). */
function toolText(content: MessageContent): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const pieces: string[] = [];
  for (const part of content as Array<ContentBlock | string>) {
    if (typeof part === "string") pieces.push(part);
    else if (part && typeof (part as { text?: unknown }).text === "string") pieces.push((part as { text: string }).text);
    else return null;
  }
  return pieces.length ? pieces.join("\n") : null;
}

function snapEnd(text: string, pos: number): number {
  if (pos <= 0 || pos >= text.length) return pos;
  const nl = text.lastIndexOf("\n", pos - 1);
  return nl >= Math.floor(pos / 2) ? nl + 1 : pos;
}

function snapStart(text: string, pos: number): number {
  if (pos <= 0 || pos >= text.length) return pos;
  const half = pos + Math.floor((text.length - pos) / 2);
  const nl = text.indexOf("\n", pos);
  return nl >= 0 && nl < half ? nl + 1 : pos;
}

/** Head+tail truncation used when the output cannot be persisted. Never longer than `maxChars`. */
export function truncateHeadTail(content: string, toolName: string, maxChars: number, headChars: number, tailChars: number): string {
  const total = content.length;
  if (maxChars <= 0 || total <= maxChars) return content;
  const marker = (n: number) =>
    `\n\n[... ${n} chars omitted from ${toolName} output. Persistent storage unavailable. Consider narrowing the query or using more specific parameters.]\n\n`;
  const overhead = marker(total).length;
  if (overhead >= maxChars) return content.slice(0, maxChars);
  const budget = maxChars - overhead;
  const head = Math.min(headChars, budget);
  const tail = Math.min(tailChars, Math.max(0, budget - head));
  const headEnd = snapEnd(content, Math.min(head, total));
  const tailStart = snapStart(content, Math.max(headEnd, total - tail));
  const h = content.slice(0, headEnd);
  const t = tailStart < total ? content.slice(tailStart) : "";
  return h + marker(total - h.length - t.length) + t;
}

function safeToolName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  return base.replace(/\.\./g, "").replace(/[^A-Za-z0-9_.-]/g, "_") || "unknown";
}

async function externalize(content: string, toolName: string, outputsPath: string, subdir: string): Promise<string | null> {
  const dir = path.resolve(outputsPath, subdir);
  if (!dir.startsWith(path.resolve(outputsPath) + path.sep)) return null;
  const file = `${safeToolName(toolName)}-${randomBytes(6).toString("hex")}.${EXT_MAP[toolName] ?? "txt"}`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, file), content, { encoding: "utf8", flag: "wx" });
  } catch {
    return null;
  }
  return `${VIRTUAL_OUTPUTS_BASE}/${subdir.split(path.sep).join("/")}/${file}`;
}

function triggerFor(toolName: string, cfg: Config): number {
  const candidates: number[] = [];
  const ext = cfg.tool_overrides[toolName] ?? cfg.externalize_min_chars;
  if (ext > 0) candidates.push(ext);
  if (cfg.fallback_max_chars > 0) candidates.push(cfg.fallback_max_chars);
  return candidates.length ? Math.min(...candidates) : -1;
}

function overBudget(msg: ToolMessage, toolName: string, cfg: Config): boolean {
  if (cfg.exempt_tools.includes(toolName)) return false;
  const trigger = triggerFor(toolName, cfg);
  if (trigger < 0) return false;
  const text = toolText(msg.content);
  return text !== null && text.length > trigger;
}

async function budgetMessage(msg: ToolMessage, toolName: string, cfg: Config, outputsPath: string | null): Promise<ToolMessage> {
  if (!overBudget(msg, toolName, cfg)) return msg;
  const text = toolText(msg.content) as string;
  const threshold = cfg.tool_overrides[toolName] ?? cfg.externalize_min_chars;
  if (threshold > 0 && text.length > threshold && outputsPath) {
    const virtualPath = await externalize(text, toolName, outputsPath, cfg.storage_subdir);
    if (virtualPath) {
      const preview = renderToolOutputPreview(text, {
        toolName,
        virtualPath,
        headChars: cfg.preview_head_chars,
        tailChars: cfg.preview_tail_chars,
      });
      return { ...msg, content: preview };
    }
  }
  if (cfg.fallback_max_chars > 0 && text.length > cfg.fallback_max_chars) {
    return {
      ...msg,
      content: truncateHeadTail(text, toolName, cfg.fallback_max_chars, cfg.fallback_head_chars, cfg.fallback_tail_chars),
    };
  }
  return msg;
}

function outputsPathOf(request: ToolCallRequest): string | null {
  const td = request.state?.thread_data as { outputs_path?: unknown } | undefined | null;
  return td && typeof td.outputs_path === "string" && td.outputs_path ? td.outputs_path : null;
}

async function budgetResult(result: ToolCallResult, fallbackName: string, cfg: Config, outputsPath: string | null): Promise<ToolCallResult> {
  if (!isCommand(result)) return budgetMessage(result, result.name || fallbackName, cfg, outputsPath);
  const messages = result.update.messages;
  if (!Array.isArray(messages)) return result;
  let changed = false;
  const next: unknown[] = [];
  for (const m of messages) {
    if (m && typeof m === "object" && (m as { type?: unknown }).type === "tool") {
      const tm = m as ToolMessage;
      const patched = await budgetMessage(tm, tm.name || fallbackName, cfg, outputsPath);
      if (patched !== tm) changed = true;
      next.push(patched);
    } else next.push(m);
  }
  if (!changed) return result;
  return new Command({ update: { ...result.update, messages: next }, goto: result.goto, resume: result.resume });
}

/**
 * The smallest trigger any tool can have (`triggerFor` takes the minimum of
 * these candidates), or -1 when no tool can ever be over budget. A plain-text
 * tool message no longer than this cannot be over budget whatever its tool.
 */
function triggerFloor(cfg: Config): number {
  const candidates = [cfg.externalize_min_chars, ...Object.values(cfg.tool_overrides), cfg.fallback_max_chars].filter((n) => n > 0);
  return candidates.length ? Math.min(...candidates) : -1;
}

/** True unless `m` is surely within budget: cheap, so a request without long tool results skips `budgetHistory`. */
function mayBeOverBudget(m: Message, floor: number): boolean {
  if (m.type !== "tool" || floor < 0) return false;
  return typeof m.content !== "string" || m.content.length > floor;
}

/** Budget historical tool messages of a model request (fallback truncation only). Null when unchanged. */
async function budgetHistory(messages: readonly Message[], cfg: Config): Promise<Message[] | null> {
  const callNames = new Map<string, string>();
  for (const m of messages) if (m.type === "ai") for (const c of m.tool_calls) callNames.set(c.id, c.name);
  const nameOf = (m: ToolMessage) => m.name || callNames.get(m.tool_call_id) || "unknown";
  if (!messages.some((m) => m.type === "tool" && overBudget(m, nameOf(m), cfg))) return null;
  const out: Message[] = [];
  for (const m of messages) out.push(m.type === "tool" ? await budgetMessage(m, nameOf(m), cfg, null) : m);
  return out;
}

/**
 * DeerFlow's ToolOutputBudgetMiddleware. A tool result longer than
 * `externalize_min_chars` (per-tool `tool_overrides`) is written to
 * `{thread outputs}/{storage_subdir}/<tool>-<id>.<ext>` and replaced by a typed
 * synopsis with a head/tail sample and a `read_file` reference to the virtual
 * path. Without a thread outputs directory (or when the write fails), outputs
 * over `fallback_max_chars` are truncated to head + tail. `exempt_tools` are
 * never touched. On every model call, oversized historical tool messages are
 * fallback-truncated on the request copy.
 */
export function createToolOutputBudgetMiddleware(options: ToolOutputBudgetOptions = {}): AgentMiddleware {
  const cfg = parseMiddlewareOptions("ToolOutputBudgetMiddleware", toolOutputOptionsSchema, options);
  const floor = triggerFloor(cfg);
  return {
    name: "ToolOutputBudgetMiddleware",
    async wrapToolCall(request, handler) {
      const result = await handler(request);
      if (!cfg.enabled) return result;
      return budgetResult(result, request.toolCall.name, cfg, outputsPathOf(request));
    },
    async wrapModelCall(request, handler) {
      if (!cfg.enabled || !request.messages.some((m) => mayBeOverBudget(m, floor))) return handler(request);
      const patched = await budgetHistory(request.messages, cfg);
      return handler(patched ? { ...request, messages: patched } : request);
    },
  };
}
