import { randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import { humanMessage, lastIndexOfType, removeMessage } from "../messages";
import type { AIMessage, ContentBlock, HumanMessage, Message } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import type { AgentState, ViewedImage } from "../state";

/** Largest image (bytes) read into a request. */
export const MAX_VIEW_IMAGE_BYTES = 20 * 1024 * 1024;
/** Id prefix of the transient image-context message. */
export const VIEW_IMAGE_CONTEXT_ID_PREFIX = "view-image-context:";
/** `additional_kwargs` marker of the transient image-context message. */
export const VIEW_IMAGE_CONTEXT_MARKER = "deerflow_view_image_context";

/** True for the trusted transient image-context message. */
export function isViewImageContextMessage(m: Message): boolean {
  return m.type === "human" && !!m.id && m.id.startsWith(VIEW_IMAGE_CONTEXT_ID_PREFIX) && m.additional_kwargs?.[VIEW_IMAGE_CONTEXT_MARKER] === true;
}

async function readDataUrl(actualPath: string, mime: string, expectedSize: number): Promise<string | null> {
  try {
    const st = await fs.stat(actualPath);
    if (!st.isFile() || st.size !== expectedSize || st.size > MAX_VIEW_IMAGE_BYTES) return null;
    const bytes = await fs.readFile(actualPath);
    if (bytes.length !== expectedSize) return null;
    return `data:${mime};base64,${bytes.toString("base64")}`;
  } catch {
    return null;
  }
}

/** Content blocks describing every viewed image, with base64 `image_url` blocks. */
export async function buildViewedImagesContent(viewed: Record<string, ViewedImage> | undefined | null): Promise<ContentBlock[]> {
  const entries = Object.entries(viewed ?? {});
  if (!entries.length) return [{ type: "text", text: "No images have been viewed." }];
  const blocks: ContentBlock[] = [{ type: "text", text: "Here are the images you've viewed:" }];
  for (const [path, img] of entries) {
    const mime = img?.mime_type ?? "unknown";
    blocks.push({ type: "text", text: `\n- **${path}** (${mime})` });
    if (img?.actual_path) {
      const url = await readDataUrl(img.actual_path, mime, img.size ?? 0);
      if (url) blocks.push({ type: "image_url", image_url: { url } });
      else blocks.push({ type: "text", text: `  (file unavailable or changed on disk: ${img.actual_path})` });
    }
  }
  return blocks;
}

function shouldInject(messages: readonly Message[]): boolean {
  const idx = lastIndexOfType(messages, "ai");
  if (idx < 0) return false;
  const ai = messages[idx] as AIMessage;
  if (!ai.tool_calls.some((c) => c.name === "view_image")) return false;
  const ids = ai.tool_calls.map((c) => c.id).filter(Boolean);
  const done = new Set(messages.slice(idx + 1).filter((m) => m.type === "tool").map((m) => (m as { tool_call_id: string }).tool_call_id));
  if (!ids.every((id) => done.has(id))) return false;
  for (const m of messages.slice(idx + 1)) {
    if (m.type !== "human") continue;
    if (isViewImageContextMessage(m)) return false;
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    if (text.includes("Here are the images you've viewed") || text.includes("Here are the details of the images you've viewed")) return false;
  }
  return true;
}

/** Options of {@link createViewImageMiddleware}. */
export interface ViewImageOptions {
  /** The model accepts images (config `supports_vision`); when false the middleware does nothing. Default true. */
  supportsVision?: boolean;
}

/**
 * DeerFlow's `ViewImageMiddleware`: once every tool call of the last AI
 * message that used `view_image` has a result, reads the viewed images
 * (`state.viewed_images[path].actual_path`, size re-checked, ≤ 20 MiB) and
 * adds a hidden human message (id `view-image-context:…`, marker
 * `deerflow_view_image_context`) with base64 `image_url` blocks before the
 * model call; after the model call it removes that message so base64 never
 * persists in checkpoints.
 */
export function createViewImageMiddleware(options: ViewImageOptions = {}): AgentMiddleware {
  const enabled = options.supportsVision ?? true;
  return {
    name: "ViewImageMiddleware",
    async beforeModel(state: AgentState): Promise<HookResult> {
      if (!enabled || !shouldInject(state.messages)) return;
      const content = await buildViewedImagesContent(state.viewed_images as Record<string, ViewedImage> | undefined);
      const msg: HumanMessage = humanMessage(content, {
        id: `${VIEW_IMAGE_CONTEXT_ID_PREFIX}${randomUUID().replace(/-/g, "")}`,
        additional_kwargs: { hide_from_ui: true, [VIEW_IMAGE_CONTEXT_MARKER]: true },
      });
      return { messages: [msg] };
    },
    afterModel(state: AgentState): HookResult {
      if (!enabled) return;
      const removals = state.messages.filter(isViewImageContextMessage).map((m) => removeMessage(m.id as string));
      return removals.length ? { messages: removals } : undefined;
    },
  };
}
