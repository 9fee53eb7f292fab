import type { Migration } from "./migrate";

/*
 * Tables of the core stores on PostgreSQL. Names carry a `deerflow_` prefix
 * so a database shared with other software (e.g. LangGraph's own
 * `checkpoints` table) never collides. Text columns that are sorted or
 * compared use the "C" collation: bytewise order, as SQLite and the
 * in-memory stores compare strings. Record bodies are stored as the JSON
 * text the stores wrote (not jsonb), so a record comes back exactly as it
 * was put, without a server-side parse on every write; only thread metadata
 * is jsonb, because thread search filters on it.
 */

/** Component `checkpoints`: one row per checkpoint delta. */
export const CHECKPOINT_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "checkpoints",
    up: `
      CREATE TABLE deerflow_checkpoints (
        thread_id TEXT COLLATE "C" NOT NULL,
        checkpoint_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        parent_id TEXT COLLATE "C",
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        delta TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id)
      );
      CREATE INDEX deerflow_checkpoints_thread_seq ON deerflow_checkpoints (thread_id, seq);
    `,
  },
];

/** Component `persistence`: thread metadata, run records, the transcript. */
export const PERSISTENCE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "threads_runs_messages",
    up: `
      CREATE TABLE deerflow_threads (
        thread_id TEXT COLLATE "C" PRIMARY KEY,
        user_id TEXT COLLATE "C" NOT NULL,
        status TEXT NOT NULL,
        metadata JSONB NOT NULL,
        display_name TEXT,
        created_at TEXT COLLATE "C" NOT NULL,
        updated_at TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX deerflow_threads_user ON deerflow_threads (user_id, updated_at DESC);
      CREATE INDEX deerflow_threads_running ON deerflow_threads (status) WHERE status = 'running';
      CREATE TABLE deerflow_runs (
        run_id TEXT COLLATE "C" PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        thread_id TEXT COLLATE "C" NOT NULL,
        user_id TEXT NOT NULL,
        assistant_id TEXT NOT NULL,
        status TEXT NOT NULL,
        metadata TEXT NOT NULL,
        kwargs TEXT NOT NULL,
        multitask_strategy TEXT NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL,
        updated_at TEXT NOT NULL,
        usage TEXT NOT NULL,
        stop_reason TEXT,
        error TEXT,
        model_name TEXT,
        execution TEXT
      );
      CREATE INDEX deerflow_runs_thread ON deerflow_runs (thread_id, created_at);
      CREATE INDEX deerflow_runs_active ON deerflow_runs (status) WHERE status IN ('pending', 'running');
      CREATE TABLE deerflow_messages (
        thread_id TEXT COLLATE "C" NOT NULL,
        message_id TEXT COLLATE "C" NOT NULL,
        -- store-wide order (never looked up alone, so no index of its own)
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        run_id TEXT NOT NULL,
        message_type TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, message_id)
      );
      CREATE INDEX deerflow_messages_thread_seq ON deerflow_messages (thread_id, seq);
    `,
  },
];

/** Component `run_backends`: the per-thread run slot and the runs' execution leases (epoch ms). */
export const RUN_BACKEND_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "run_locks_and_leases",
    up: `
      CREATE TABLE deerflow_run_locks (
        thread_id TEXT COLLATE "C" PRIMARY KEY,
        run_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE TABLE deerflow_run_leases (
        run_id TEXT COLLATE "C" PRIMARY KEY,
        thread_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX deerflow_run_leases_expiry ON deerflow_run_leases (expires_at);
    `,
  },
  {
    // The fencing token: each claim of a lease takes the next value of one sequence, so an epoch is never handed
    // out twice (not even after a lease row was deleted and claimed again), and a checkpoint write that carries
    // an older epoch than the lease's is refused.
    version: 2,
    name: "run_lease_epochs",
    up: `
      CREATE SEQUENCE deerflow_run_lease_epochs;
      ALTER TABLE deerflow_run_leases ADD COLUMN epoch BIGINT NOT NULL DEFAULT nextval('deerflow_run_lease_epochs');
    `,
  },
];
