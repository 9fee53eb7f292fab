import type { RunRecord, ThreadRecord } from "./types";
import { emptyUsage } from "./usage";

/** One row as a database driver returns it (column name → value). */
export type Row = Record<string, unknown>;

/**
 * A JSON column's value: text is parsed (SQLite, PostgreSQL text columns), an
 * object is taken as is (PostgreSQL jsonb, which the driver parses), and
 * anything else or unparsable text gives `fallback`.
 */
export function parseJson<T>(value: unknown, fallback: T): T {
  if (value !== null && typeof value === "object") return value as T;
  if (typeof value !== "string") return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** A thread row (the same columns on every SQL backend) as a record. */
export function threadFromRow(r: Row): ThreadRecord {
  return {
    threadId: r.thread_id as string,
    userId: r.user_id as string,
    status: r.status as string,
    metadata: parseJson(r.metadata, {}),
    displayName: (r.display_name as string | null) ?? null,
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
  };
}

/** A run row (the same columns on every SQL backend) as a record. */
export function runFromRow(r: Row): RunRecord {
  return {
    runId: r.run_id as string,
    threadId: r.thread_id as string,
    userId: r.user_id as string,
    assistantId: r.assistant_id as string,
    status: r.status as RunRecord["status"],
    metadata: parseJson(r.metadata, {}),
    kwargs: parseJson(r.kwargs, {}),
    multitaskStrategy: r.multitask_strategy as RunRecord["multitaskStrategy"],
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
    usage: { ...emptyUsage(), ...parseJson<Partial<RunRecord["usage"]>>(r.usage, {}) },
    stopReason: (r.stop_reason as string | null) ?? null,
    error: (r.error as string | null) ?? null,
    modelName: (r.model_name as string | null) ?? null,
    // Only present when stored, so records of older runs compare as before.
    ...(typeof r.execution === "string" ? { execution: parseJson<RunRecord["execution"]>(r.execution, null) } : {}),
  };
}
