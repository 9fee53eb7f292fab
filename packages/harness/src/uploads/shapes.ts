import { z } from "zod";

/** `UploadedFileInfo` of the gateway (each file of `POST /threads/{id}/uploads`). */
export const uploadedFileInfoSchema = z.object({
  filename: z.string(),
  size: z.number().int().nonnegative(),
  /**
   * Where the file is, as the agent sees it (`/mnt/user-data/uploads/<f>`,
   * the same as `virtual_path`). DeerFlow puts the host path here; host paths
   * never leave the server, so clients get the virtual one under the same name.
   */
  path: z.string(),
  /** `/mnt/user-data/uploads/<f>` */
  virtual_path: z.string(),
  /** `/api/threads/<id>/artifacts/mnt/user-data/uploads/<urlencoded f>` */
  artifact_url: z.string(),
  /** Extension with its dot (`.pdf`), empty when none. */
  extension: z.string().optional(),
  /** Modification time, seconds since the epoch. */
  modified: z.number().optional(),
  original_filename: z.string().optional(),
  markdown_file: z.string().optional(),
  markdown_path: z.string().optional(),
  markdown_virtual_path: z.string().optional(),
  markdown_artifact_url: z.string().optional(),
});
/** One uploaded file as the gateway reports it. */
export type UploadedFileInfo = z.infer<typeof uploadedFileInfoSchema>;

/** Response of `POST /api/threads/{id}/uploads`. */
export const uploadResponseSchema = z.object({
  success: z.boolean(),
  files: z.array(uploadedFileInfoSchema),
  message: z.string(),
  skipped_files: z.array(z.string()),
});
/** Response of `POST /api/threads/{id}/uploads`. */
export type UploadResponse = z.infer<typeof uploadResponseSchema>;

/** Response of `GET /api/threads/{id}/uploads/list`. */
export const uploadListResponseSchema = z.object({
  files: z.array(uploadedFileInfoSchema),
  count: z.number().int().nonnegative(),
});
/** Response of `GET /api/threads/{id}/uploads/list`. */
export type UploadListResponse = z.infer<typeof uploadListResponseSchema>;

/** Response of `DELETE /api/threads/{id}/uploads/{filename}`. */
export const uploadDeleteResponseSchema = z.object({ success: z.boolean(), message: z.string() });
/** Response of `DELETE /api/threads/{id}/uploads/{filename}`. */
export type UploadDeleteResponse = z.infer<typeof uploadDeleteResponseSchema>;

/** Response of `GET /api/threads/{id}/uploads/limits` (also the `uploads:` config keys). */
export const uploadLimitsSchema = z.object({
  max_files: z.number().int().positive(),
  max_file_size: z.number().int().positive(),
  max_total_size: z.number().int().positive(),
});
/** Upload limits. */
export type UploadLimits = z.infer<typeof uploadLimitsSchema>;

/** DeerFlow's defaults: 10 files, 50 MiB per file, 100 MiB per request. */
export const DEFAULT_UPLOAD_LIMITS: UploadLimits = Object.freeze({
  max_files: 10,
  max_file_size: 50 * 1024 * 1024,
  max_total_size: 100 * 1024 * 1024,
});

/** `/api/threads/<id>/artifacts` + the virtual path with each segment URI-encoded. */
export function artifactUrl(threadId: string, virtualPath: string): string {
  const segments = virtualPath.replace(/^\/+/, "").split("/").map((s) => encodeURIComponent(s));
  return `/api/threads/${encodeURIComponent(threadId)}/artifacts/${segments.join("/")}`;
}
