export { batcherFor, DEFAULT_COMMIT_WINDOW_MS, WriteBatcher } from "./write-batcher";
export { deferredStep, UNCHANGED_WRITE_CODE } from "./writer";
export type { WriteBatcherOptions, WriteStep } from "./write-batcher";
