export { batcherFor, DEFAULT_COMMIT_WINDOW_MS, WriteBatcher } from "./write-batcher";
export { deferredStep } from "./writer";
export type { WriteBatcherOptions, WriteStep } from "./write-batcher";
