import type { ContentBlock } from "../messages";
import { MAX_PATH_CHECKS, rewritePathsInText, toVirtualPath } from "./path-mapping";
import type { McpPathScope } from "./path-mapping";

/** The parts of an MCP `CallToolResult` we read (the SDK's type is wider and version-dependent). */
export interface McpCallResult {
  content?: Array<Record<string, unknown>>;
  structuredContent?: unknown;
  isError?: boolean;
  /** Old servers answer with `toolResult` instead of `content`. */
  toolResult?: unknown;
}

/** A converted result: what a tool's `execute` returns for it. */
export interface McpToolResult {
  content: string | ContentBlock[];
  status: "success" | "error";
  /** `structured_content` and `resource_links` when the server sent them. */
  artifact?: Record<string, unknown>;
}

function imageBlock(data: string, mime: string): ContentBlock {
  return { type: "image_url", image_url: { url: `data:${mime};base64,${data}` } };
}

/**
 * Turn an MCP tool result into a tool result the model and the UI can use:
 * text (local paths rewritten to `/mnt/user-data/...` for stdio servers),
 * images as `image_url` data blocks with a short text note, resource links as
 * a readable line with their (mapped) URI, embedded resources inlined,
 * `structuredContent` kept as the artifact (and shown as JSON when the server
 * sent no text). Pure text collapses to a string. `isError` results become
 * error tool messages prefixed `Error:`.
 */
export function convertCallToolResult(result: McpCallResult, scope?: McpPathScope): McpToolResult {
  const checked = new Map<string, string | undefined>();
  const text = (s: string) => (scope ? rewritePathsInText(s, scope, checked) : s);
  const link = (uri: string) => {
    if (!scope) return uri;
    // Resource links draw on the same per-result budget of filesystem checks as the text.
    if (!checked.has(uri)) {
      if (checked.size >= MAX_PATH_CHECKS) return uri;
      checked.set(uri, toVirtualPath(uri, scope));
    }
    return checked.get(uri) ?? uri;
  };
  const blocks: ContentBlock[] = [];
  const links: Array<{ uri: string; name?: string; mime_type?: string }> = [];
  const items = Array.isArray(result.content) ? result.content : result.toolResult !== undefined ? [{ type: "text", text: JSON.stringify(result.toolResult) }] : [];
  for (const item of items) {
    switch (item.type) {
      case "text":
        blocks.push({ type: "text", text: text(String(item.text ?? "")) });
        break;
      case "image": {
        const mime = String(item.mimeType ?? "image/png");
        blocks.push({ type: "text", text: `[image: ${mime}, ${Math.floor((String(item.data ?? "").length * 3) / 4)} bytes]` });
        blocks.push(imageBlock(String(item.data ?? ""), mime));
        break;
      }
      case "audio":
        blocks.push({ type: "text", text: `[audio: ${String(item.mimeType ?? "audio")} omitted]` });
        break;
      case "resource_link": {
        const uri = link(String(item.uri ?? ""));
        const mime = typeof item.mimeType === "string" ? item.mimeType : undefined;
        links.push({ uri, ...(typeof item.name === "string" ? { name: item.name } : {}), ...(mime ? { mime_type: mime } : {}) });
        blocks.push({ type: "text", text: `[resource: ${String(item.name ?? uri)}${mime ? ` (${mime})` : ""}] ${uri}` });
        break;
      }
      case "resource": {
        const res = (item.resource ?? {}) as Record<string, unknown>;
        const mime = typeof res.mimeType === "string" ? res.mimeType : undefined;
        if (typeof res.text === "string") blocks.push({ type: "text", text: text(res.text) });
        else if (typeof res.blob === "string" && mime?.startsWith("image/")) blocks.push(imageBlock(res.blob, mime));
        else blocks.push({ type: "text", text: `[embedded resource: ${String(res.uri ?? "")}${mime ? ` (${mime})` : ""}]` });
        break;
      }
      default:
        blocks.push({ type: "text", text: JSON.stringify(item) });
    }
  }
  const hasText = blocks.some((b) => b.type === "text");
  if (!hasText && result.structuredContent !== undefined) blocks.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  const artifact: Record<string, unknown> = {};
  if (result.structuredContent !== undefined) artifact.structured_content = result.structuredContent;
  if (links.length) artifact.resource_links = links;
  const onlyText = blocks.every((b) => b.type === "text");
  const joined = blocks.map((b) => (b.type === "text" ? (b as { text: string }).text : "")).join("\n");
  if (result.isError) {
    return { content: `Error: ${joined || "the MCP tool reported an error"}`, status: "error", ...(Object.keys(artifact).length ? { artifact } : {}) };
  }
  const content: string | ContentBlock[] = onlyText ? joined || "(no output)" : blocks;
  return { content, status: "success", ...(Object.keys(artifact).length ? { artifact } : {}) };
}
