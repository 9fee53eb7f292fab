export { TERMINAL_RUN_STATUSES } from "./types";
export type {
  MessageRow,
  MessageStore,
  MultitaskStrategy,
  PersistenceStores,
  RunRecord,
  RunExecution,
  StoredRunInput,
  RunRecordStatus,
  RunStore,
  RunWriteFence,
  RunUsage,
  ThreadRecord,
  ThreadSearch,
  ThreadStore,
} from "./types";
export { emptyUsage, runUsageFromMessages, runUsageFromOutcome } from "./usage";
export { messagesChangedByRun } from "./transcript";
export { compareThreads, matchesMetadata } from "./ordering";
export { ensureSqliteSchema, openSqliteStores, SqliteMessageStore, SqliteRunStore, SqliteThreadStore } from "./sqlite-stores";
export { createMemoryStores, MemoryMessageStore, MemoryRunStore, MemoryThreadStore } from "./memory-stores";
export { PERSISTENCE_DB_FILE, persistenceDbPath } from "./paths";
export { containsSecretText, REDACTED, redactSecretKeys, redactSecretText } from "./redact";
export { MemoryRunLeases, MemoryRunLock, SqliteRunLocks } from "./run-locks";
