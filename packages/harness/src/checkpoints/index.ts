export type {
  CheckpointFence,
  CheckpointMetadata,
  CheckpointRecord,
  CheckpointStore,
  ListCheckpointOptions,
  MessageOp,
  StateDelta,
} from "./types";
export { applyDelta, deltaSize, diffState } from "./delta";
export { MemoryCheckpointStore } from "./memory-store";
export { SqliteCheckpointStore } from "./sqlite-store";
export { asCheckpointer, Checkpointer, newCheckpointId } from "./checkpointer";
export type { CheckpointerOptions, LoadedCheckpoint } from "./checkpointer";
