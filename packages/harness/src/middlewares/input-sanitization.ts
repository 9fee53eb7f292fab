import { z } from "zod";
import type { ContentBlock, HumanMessage, Message, MessageContent } from "../messages";
import { contentText } from "../messages";
import type { AgentMiddleware, ModelCallRequest } from "../runtime/types";
import { frameUntrustedText, neutralizeUntrustedText } from "../text";
import { parseMiddlewareOptions } from "./zod-options";

/** `additional_kwargs` key holding the user's pre-sanitization text (server-owned provenance). */
export const ORIGINAL_USER_CONTENT_KEY = "original_user_content";

const SUMMARY_MESSAGE_NAME = "summary";

const optionsSchema = z.object({});

/** Options of {@link createInputSanitizationMiddleware} (none today; kept for config symmetry). */
export type InputSanitizationOptions = z.input<typeof optionsSchema>;

/** True for real user turns: not summaries, not hidden system-injected human messages. */
function isGenuineUserMessage(m: Message): m is HumanMessage {
  if (m.type !== "human") return false;
  if (m.name === SUMMARY_MESSAGE_NAME) return false;
  if (m.additional_kwargs?.hide_from_ui) {
    const reply = m.additional_kwargs.human_input_response;
    if (reply === undefined || reply === null) return false;
  }
  return true;
}

type Block = ContentBlock | string;

function isTextBlock(b: Block): boolean {
  if (typeof b === "string") return b.length > 0;
  return b?.type === "text" && typeof (b as { text?: unknown }).text === "string" && (b as { text: string }).text.length > 0;
}

function blockText(b: Block): string {
  return typeof b === "string" ? b : (b as { text: string }).text;
}

/** Text of content and, for block lists, the indexes of its text blocks. */
function extractText(content: MessageContent): { text: string; textIdx: number[] | null } {
  if (typeof content === "string") return { text: content, textIdx: null };
  if (!Array.isArray(content)) return { text: "", textIdx: null };
  const blocks = content as Block[];
  const idx: number[] = [];
  blocks.forEach((b, i) => {
    if (isTextBlock(b)) idx.push(i);
  });
  return { text: idx.map((i) => blockText(blocks[i])).join("\n"), textIdx: idx };
}

/** Collapse the text blocks into one merged block, keeping interleaved non-text blocks in place. */
function rebuildContent(content: Block[], processed: string, textIdx: number[]): ContentBlock[] {
  if (!textIdx.length) return content as ContentBlock[];
  const first = textIdx[0];
  const last = textIdx[textIdx.length - 1];
  const isText = new Set(textIdx);
  const out: Block[] = [...content.slice(0, first), { type: "text", text: processed }];
  for (let i = first + 1; i <= last; i++) if (!isText.has(i)) out.push(content[i]);
  out.push(...content.slice(last + 1));
  return out as ContentBlock[];
}

function sanitizeBlocksIndividually(content: Block[]): ContentBlock[] {
  return content.map((b, i) => {
    if (i === 0) return b; // the server-injected block stays untouched
    if (typeof b === "string") return neutralizeUntrustedText(b);
    if (b?.type === "text" && typeof (b as { text?: unknown }).text === "string") {
      return { ...b, text: neutralizeUntrustedText((b as { text: string }).text) };
    }
    return b;
  }) as ContentBlock[];
}

/** Sanitize the last genuine user message of a request's messages. Returns null when nothing changes. */
export function sanitizeLastUserMessage(messages: readonly Message[]): Message[] | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const msg = messages[i];
    if (!isGenuineUserMessage(msg)) continue;
    const content = msg.content;
    const { text, textIdx } = extractText(content);
    if (!text && typeof content !== "string") return null; // image-only
    const kwargs: Record<string, unknown> = { ...(msg.additional_kwargs ?? {}) };
    const original = kwargs[ORIGINAL_USER_CONTENT_KEY];
    let processed: string;
    if (typeof original === "string" && original) {
      // Only the user's own text (a suffix after server-prepended blocks) is framed.
      const framed = frameUntrustedText(original);
      if (framed === original) {
        processed = text;
      } else {
        const at = text.lastIndexOf(original);
        if (at >= 0) {
          processed = text.slice(0, at) + framed;
        } else if (Array.isArray(content) && content.length >= 2) {
          const out = messages.slice();
          out[i] = { ...msg, content: sanitizeBlocksIndividually(content as Block[]), additional_kwargs: kwargs };
          return out;
        } else {
          processed = frameUntrustedText(text);
        }
      }
    } else if (typeof original === "string") {
      processed = text; // upload with no user text: server blocks survive untouched
    } else {
      processed = frameUntrustedText(text);
    }
    if (processed === text) return null;
    const newContent: MessageContent = textIdx ? rebuildContent(content as Block[], processed, textIdx) : processed;
    if (typeof original !== "string") kwargs[ORIGINAL_USER_CONTENT_KEY] = contentText(content);
    const out = messages.slice();
    out[i] = { ...msg, content: newContent, additional_kwargs: kwargs };
    return out;
  }
  return null;
}

/**
 * DeerFlow's InputSanitizationMiddleware: on the model request copy only
 * (state is never touched), escapes blocked framework/injection tags in the
 * last genuine user message, neutralizes forged boundary markers and wraps the
 * clean text in `--- BEGIN USER INPUT ---` / `--- END USER INPUT ---`.
 * Fails open: an unexpected processing error sends the original request.
 */
export function createInputSanitizationMiddleware(options: InputSanitizationOptions = {}): AgentMiddleware {
  parseMiddlewareOptions("InputSanitizationMiddleware", optionsSchema, options);
  return {
    name: "InputSanitizationMiddleware",
    async wrapModelCall(request, handler) {
      let next: ModelCallRequest = request;
      try {
        const patched = sanitizeLastUserMessage(request.messages);
        if (patched) next = { ...request, messages: patched };
      } catch {
        next = request;
      }
      return handler(next);
    },
  };
}
