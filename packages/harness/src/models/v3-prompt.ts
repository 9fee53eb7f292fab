import type {
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolChoice,
} from "@ai-sdk/provider";
import { contentText, reasoningText } from "../messages";
import type { AIMessage, ContentBlock, Message, MessageContent } from "../messages";
import type { ModelSettings, ToolSpec } from "./types";

/** Options of {@link toV3Prompt}. */
export interface PromptConversionOptions {
  /** Provider key for provider options on parts (`anthropic`, `openai`…). */
  providerKey: string;
  /** Move system messages that follow other messages into user turns (Anthropic allows system only first). */
  leadingSystemOnly?: boolean;
}

const DATA_URL = /^data:([^;,]+)(;base64)?,(.*)$/s;

function imagePart(url: string): LanguageModelV3FilePart | null {
  const m = DATA_URL.exec(url);
  if (m) {
    const data = m[2] ? m[3] : Buffer.from(decodeURIComponent(m[3]), "utf8").toString("base64");
    return { type: "file", mediaType: m[1], data };
  }
  try {
    return { type: "file", mediaType: "image/*", data: new URL(url) };
  } catch {
    return null;
  }
}

function userParts(content: MessageContent): Array<LanguageModelV3TextPart | LanguageModelV3FilePart> {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const parts: Array<LanguageModelV3TextPart | LanguageModelV3FilePart> = [];
  for (const block of content as ContentBlock[]) {
    const b = block as Record<string, unknown>;
    if (b.type === "text" && typeof b.text === "string") parts.push({ type: "text", text: b.text });
    else if (b.type === "image_url") {
      const iu = b.image_url;
      const url = typeof iu === "string" ? iu : iu && typeof iu === "object" ? String((iu as { url?: unknown }).url ?? "") : "";
      const part = url ? imagePart(url) : null;
      if (part) parts.push(part);
    } else if (b.type === "image") {
      // LangChain standard block: {type:"image", base64|data, mime_type} or {url}.
      const data = (b.base64 ?? b.data) as string | undefined;
      const mime = (b.mime_type ?? b.mimeType ?? "image/png") as string;
      if (typeof data === "string") parts.push({ type: "file", mediaType: mime, data });
      else if (typeof b.url === "string") {
        const part = imagePart(b.url);
        if (part) parts.push(part);
      }
    }
  }
  if (!parts.length) parts.push({ type: "text", text: "" });
  return parts;
}

function assistantMessage(m: AIMessage, providerKey: string): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: "assistant" }>["content"] = [];
  const reasoning = reasoningText(m);
  if (reasoning) {
    const signature = m.response_metadata?.reasoning_signature;
    content.push({
      type: "reasoning",
      text: reasoning,
      ...(typeof signature === "string" ? { providerOptions: { [providerKey]: { signature } } } : {}),
    });
  }
  const text = contentText(m.content);
  if (text) content.push({ type: "text", text });
  for (const call of m.tool_calls) {
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args ?? {} });
  }
  if (!content.length) content.push({ type: "text", text: "" });
  return { role: "assistant", content };
}

/**
 * Convert our messages to an AI SDK V3 prompt: system, human (text + images),
 * AI (reasoning, text, tool calls) and tool results (grouped per turn).
 */
export function toV3Prompt(messages: readonly Message[], options: PromptConversionOptions): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  const toolNames = new Map<string, string>();
  let seenNonSystem = false;
  for (const m of messages) {
    switch (m.type) {
      case "system": {
        const text = contentText(m.content);
        if (options.leadingSystemOnly && seenNonSystem) prompt.push({ role: "user", content: [{ type: "text", text }] });
        else prompt.push({ role: "system", content: text });
        break;
      }
      case "human":
        seenNonSystem = true;
        prompt.push({ role: "user", content: userParts(m.content) });
        break;
      case "ai":
        seenNonSystem = true;
        for (const c of m.tool_calls) toolNames.set(c.id, c.name);
        prompt.push(assistantMessage(m, options.providerKey));
        break;
      case "tool": {
        seenNonSystem = true;
        const text = contentText(m.content) || (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
        const images = m.status === "error" || !IMAGE_TOOL_RESULTS.has(options.providerKey) ? [] : toolResultImages(m.content);
        const part = {
          type: "tool-result" as const,
          toolCallId: m.tool_call_id,
          toolName: m.name ?? toolNames.get(m.tool_call_id) ?? "tool",
          output:
            m.status === "error"
              ? { type: "error-text" as const, value: text }
              : images.length
                ? { type: "content" as const, value: [...(text ? [{ type: "text" as const, text }] : []), ...images] }
                : { type: "text" as const, value: text },
        };
        const last = prompt[prompt.length - 1];
        if (last && last.role === "tool") last.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/**
 * Providers whose tool results can carry images (Anthropic's tool_result
 * blocks). Chat-completions style APIs only take text there: their adapters
 * would serialise the image bytes into the text, so images are left out and
 * the text (which names the image) is sent alone.
 */
const IMAGE_TOOL_RESULTS = new Set(["anthropic"]);

/** Inline (base64) images of a tool message's content blocks, as tool-result content parts. */
function toolResultImages(content: MessageContent): Array<{ type: "image-data"; data: string; mediaType: string }> {
  if (typeof content === "string") return [];
  const out: Array<{ type: "image-data"; data: string; mediaType: string }> = [];
  for (const part of userParts(content)) {
    if (part.type === "file" && typeof part.data === "string" && part.mediaType.startsWith("image/") && part.mediaType !== "image/*") {
      out.push({ type: "image-data", data: part.data, mediaType: part.mediaType });
    }
  }
  return out;
}

/** Our tool specs as V3 function tools. */
export function toV3Tools(tools: readonly ToolSpec[]): LanguageModelV3FunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    inputSchema: (t.parameters && Object.keys(t.parameters).length ? t.parameters : { type: "object", properties: {} }) as never,
  }));
}

/** Our tool choice as a V3 tool choice. */
export function toV3ToolChoice(choice: ModelSettings["toolChoice"]): LanguageModelV3ToolChoice | undefined {
  if (!choice) return undefined;
  if (typeof choice === "object") return { type: "tool", toolName: choice.name };
  return { type: choice };
}
