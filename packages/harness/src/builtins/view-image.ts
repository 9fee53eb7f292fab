import path from "node:path";
import { z } from "zod";
import { errorMessage } from "../errors";
import { toolMessage } from "../messages";
import { ensureRunSandbox, VIRTUAL_USER_DATA } from "../sandbox";
import type { SandboxProvider } from "../sandbox";
import { Command } from "../state";
import type { ViewedImage } from "../state";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";

/** Largest image view_image accepts (20 MiB). */
export const VIEW_IMAGE_MAX_BYTES = 20 * 1024 * 1024;

/** Extension → MIME type of the supported formats. */
export const IMAGE_MIME_BY_EXT: Readonly<Record<string, string>> = Object.freeze({
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
});

/** MIME type the magic bytes indicate, or undefined. */
export function sniffImageMime(bytes: Uint8Array): string | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (b.length >= 6 && ["GIF87a", "GIF89a"].includes(b.subarray(0, 6).toString("latin1"))) return "image/gif";
  if (b.length >= 12 && b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

const schema = z.object({
  image_path: z.string().min(1).describe("Absolute path of the image under /mnt/user-data (jpg, jpeg, png, webp or gif)."),
});

/** Options of {@link createViewImageTool}. */
export interface ViewImageOptions {
  provider: SandboxProvider;
}

/**
 * `view_image(image_path)`: checks that the extension and the magic bytes
 * agree (jpg/jpeg/png/webp/gif) and the size is ≤ 20 MiB, then records the
 * image in `viewed_images` (no bytes stored in state) and returns
 * "Successfully read image". `actual_path` is the virtual path: a remote
 * sandbox has no host path, and the ViewImage middleware reads through the sandbox.
 */
export function createViewImageTool(options: ViewImageOptions): ToolDefinition<z.output<typeof schema>> {
  const fail = (msg: string) => ({ content: `Error: ${msg}`, status: "error" as const });
  return tool({
    name: "view_image",
    description: "Read an image file so you can see it. Only for images under /mnt/user-data (jpg, jpeg, png, webp, gif; max 20 MiB).",
    schema,
    metadata: { group: "builtin", requiresSandbox: true },
    execute: async (args, runtime) => {
      const p = args.image_path.trim();
      if (p.split("/").includes("..")) return fail("Access denied: path traversal detected");
      const norm = path.posix.normalize(p);
      if (!norm.startsWith(`${VIRTUAL_USER_DATA}/`)) return fail(`Only images under ${VIRTUAL_USER_DATA}/ can be viewed: ${p}`);
      const ext = path.posix.extname(norm).slice(1).toLowerCase();
      const mime = IMAGE_MIME_BY_EXT[ext];
      if (!mime) return fail(`Unsupported image format '.${ext}'. Supported: ${Object.keys(IMAGE_MIME_BY_EXT).join(", ")}`);
      try {
        const sandbox = await ensureRunSandbox(options.provider, runtime.context);
        const st = await sandbox.stat(norm);
        if (!st || !st.isFile) return fail(`Image not found: ${norm}`);
        if (st.size > VIEW_IMAGE_MAX_BYTES) return fail(`Image is ${st.size} bytes, over the ${VIEW_IMAGE_MAX_BYTES}-byte limit`);
        const bytes = await sandbox.readFileBytes(norm);
        const actual = sniffImageMime(bytes);
        if (actual !== mime) {
          return fail(`Image content (${actual ?? "unknown format"}) does not match its .${ext} extension: ${norm}`);
        }
        const entry: ViewedImage = { mime_type: mime, size: bytes.byteLength, actual_path: norm };
        return new Command({
          update: {
            viewed_images: { [norm]: entry },
            messages: [toolMessage("Successfully read image", { tool_call_id: runtime.toolCallId, name: "view_image" })],
          },
        });
      } catch (err) {
        return fail(errorMessage(err));
      }
    },
  });
}
