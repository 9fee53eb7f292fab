import { threadPaths, UploadManager } from "@deerflow-ts/harness";
import type { ThreadPaths, UploadSource } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { userOf } from "../auth";
import { appSettings } from "../app-settings";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { assertMultipart } from "../security";
import { ID_PATTERN } from "../validate";

/**
 * Uploads endpoints (`/threads/{id}/uploads`). All file handling — name sanitising, limits,
 * staging and atomic rename, listing, deletion, the JSON shapes — is the
 * harness `UploadManager`, the same code the embedded client runs. Its
 * `UploadError`s carry the HTTP status and are mapped by the gateway's error
 * handler.
 */
export function registerUploadRoutes(app: Hono, ctx: GatewayContext): void {
  // Limits follow the current config (a config.yaml edit applies to the next upload).
  const managerNow = (): UploadManager => new UploadManager(appSettings(ctx).uploads);

  /**
   * Thread id → the caller's paths of that thread; a malformed id is a 400
   * here (DeerFlow's upload routes). Another user's thread was answered 404
   * by the thread-access middleware; the folder is the caller's in any case.
   */
  const paths = (c: Context): ThreadPaths => {
    const raw = c.req.param("thread_id") ?? "";
    if (!ID_PATTERN.test(raw)) throw new HttpError(400, `Invalid thread id: ${JSON.stringify(raw)}`);
    return threadPaths(ctx.options.baseDir, userOf(c).id, raw);
  };

  app.get("/threads/:thread_id/uploads/limits", (c) => {
    paths(c);
    return c.json({ ...managerNow().limits });
  });

  app.post("/threads/:thread_id/uploads", async (c) => {
    const target = paths(c);
    const declared = Number(c.req.header("content-length") ?? "NaN");
    // multipart framing adds some bytes; anything far beyond the total limit is refused unread
    const manager = managerNow();
    const limits = manager.limits;
    if (Number.isFinite(declared) && declared > limits.max_total_size + 1024 * 1024) {
      throw new HttpError(413, `The upload is larger than the total limit of ${limits.max_total_size} bytes (uploads.max_total_size).`);
    }
    // (a cross-site form or fetch can send multipart without a preflight: the request guard's origin rule stops those)
    assertMultipart(c.req.header("content-type"));
    let form: FormData;
    try {
      form = await c.req.formData();
    } catch {
      throw new HttpError(400, "Malformed multipart body");
    }
    const sources: UploadSource[] = form
      .getAll("files")
      .filter((f): f is File => typeof f === "object" && f !== null && "arrayBuffer" in f)
      .map((f) => ({ filename: f.name, stream: f.stream(), size: f.size }));
    return c.json(await manager.save(target, sources));
  });

  app.get("/threads/:thread_id/uploads/list", async (c) => c.json(await managerNow().list(paths(c))));

  app.delete("/threads/:thread_id/uploads/:filename", async (c) =>
    c.json(await managerNow().delete(paths(c), c.req.param("filename"))),
  );
}
