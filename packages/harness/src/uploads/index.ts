export { UploadError } from "./errors";
export { dedupeFilename, isHiddenName, sanitizeUploadFilename, STAGING_PREFIX, STAGING_SUFFIX } from "./filenames";
export { guessMimeType, looksLikeText } from "./mime";
export { artifactHostPath, openArtifact, readArtifact, resolveArtifact } from "./artifacts";
export type { ArtifactContent, OpenedArtifact, ResolvedArtifact } from "./artifacts";
export { UploadManager } from "./upload-manager";
export type { UploadSource } from "./upload-manager";
export { DEFAULT_LOCAL_USER, threadPaths, VIRTUAL_USER_DATA_ROOT } from "./thread-paths";
export type { ThreadPaths } from "./thread-paths";
export {
  artifactUrl,
  DEFAULT_UPLOAD_LIMITS,
  uploadDeleteResponseSchema,
  uploadedFileInfoSchema,
  uploadLimitsSchema,
  uploadListResponseSchema,
  uploadResponseSchema,
} from "./shapes";
export type { UploadDeleteResponse, UploadedFileInfo, UploadLimits, UploadListResponse, UploadResponse } from "./shapes";
