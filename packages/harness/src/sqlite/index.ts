export { batcherFor, WriteBatcher } from "./write-batcher";
