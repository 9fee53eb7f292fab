import { z } from "zod";
import type { AppConfig } from "../config";
import type { ThreadRecord } from "../persistence";
import type { StateSnapshot } from "../runtime";

/** One entry of `GET /api/models` (DeerFlow's gateway). */
export const modelInfoSchema = z.object({
  name: z.string(),
  model: z.string(),
  display_name: z.string().nullable(),
  description: z.string().nullable(),
  supports_thinking: z.boolean(),
  supports_reasoning_effort: z.boolean(),
});
/** One configured model as the gateway reports it. */
export type ModelInfo = z.infer<typeof modelInfoSchema>;

/** Response of `GET /api/models`. */
export const modelsResponseSchema = z.object({
  models: z.array(modelInfoSchema),
  token_usage: z.object({ enabled: z.boolean() }),
});
/** Response of `GET /api/models`. */
export type ModelsResponse = z.infer<typeof modelsResponseSchema>;

/**
 * A `models:` entry: a validated config entry or a raw one. Only the listed
 * keys are read, so secrets (`api_key`, …) can never reach the listing.
 */
export type ModelEntry = AppConfig["models"][number] | Record<string, unknown>;

/** Build one {@link ModelInfo} from a `models:` entry (missing `model` falls back to `name`). */
export function buildModelInfo(entry: ModelEntry): ModelInfo {
  const m = entry as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    name: String(m.name ?? ""),
    model: String(m.model ?? m.name ?? ""),
    display_name: str(m.display_name),
    description: str(m.description),
    supports_thinking: m.supports_thinking === true,
    supports_reasoning_effort: m.supports_reasoning_effort === true,
  };
}

/** What {@link buildModelsResponse} reads: the `models:` list and `token_usage.enabled` (default true). */
export interface ModelsSource {
  models: readonly ModelEntry[];
  token_usage?: { enabled?: boolean } | null;
}

/** Build the `GET /api/models` body from the app config (shared by gateway and client). */
export function buildModelsResponse(config: ModelsSource): ModelsResponse {
  return {
    models: config.models.map(buildModelInfo),
    token_usage: { enabled: config.token_usage?.enabled !== false },
  };
}

/** `ThreadResponse` of the LangGraph-compatible API (`/threads` answers). */
export const threadResponseSchema = z.object({
  thread_id: z.string(),
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  values: z.record(z.string(), z.unknown()),
  interrupts: z.record(z.string(), z.unknown()),
});
/** A thread object as the gateway returns it. */
export type ThreadResponse = z.infer<typeof threadResponseSchema>;

/** Inputs of {@link buildThreadResponse}. */
export interface ThreadResponseInput {
  threadId: string;
  status?: string;
  createdAt: string;
  updatedAt: string;
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
}

/** JSON-safe deep copy (drops undefined, functions). */
export function toJsonSafe<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * A stored ISO timestamp as DeerFlow's gateway writes it: UTC with an
 * explicit `+00:00` offset (Python's `isoformat()`), not JavaScript's `Z`.
 */
export function wireTimestamp(iso: string): string {
  return iso.endsWith("Z") ? `${iso.slice(0, -1)}+00:00` : iso;
}

/** Build a ThreadResponse (`interrupts` is always `{}`, as DeerFlow's gateway sends). */
export function buildThreadResponse(input: ThreadResponseInput): ThreadResponse {
  return {
    thread_id: input.threadId,
    status: input.status ?? "idle",
    created_at: wireTimestamp(input.createdAt),
    updated_at: wireTimestamp(input.updatedAt),
    metadata: toJsonSafe(input.metadata ?? {}),
    values: toJsonSafe(input.values ?? {}),
    interrupts: {},
  };
}

/** A stored thread row as a ThreadResponse (`values` defaults to `{}`, `status` to the stored one). */
export function threadRecordResponse(record: ThreadRecord, values: Record<string, unknown> = {}, status?: string): ThreadResponse {
  return buildThreadResponse({
    threadId: record.threadId,
    status: status ?? record.status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    metadata: record.metadata,
    values,
  });
}

/**
 * A thread as `POST /threads/search` lists it: `values` is `{title}` from the
 * stored display name, `{}` while the thread has no title yet.
 */
export function threadSummaryResponse(record: ThreadRecord): ThreadResponse {
  return threadRecordResponse(record, record.displayName ? { title: record.displayName } : {});
}

/**
 * Status of `GET /threads/{id}`: a checkpoint with interrupts, or with
 * pending tasks after a stop, → `interrupted` (unless a run is executing),
 * otherwise the stored status (`idle` when there is no row). A run that
 * failed keeps `error`/`timeout` although its head has a pending task.
 */
export function deriveThreadStatus(record: ThreadRecord | undefined, snapshot: StateSnapshot | undefined): string {
  const status = record?.status ?? "idle";
  if (!snapshot || status === "running") return status;
  if (snapshot.interrupts.length > 0) return "interrupted";
  if (snapshot.next.length > 0 && status !== "error" && status !== "timeout") return "interrupted";
  return status;
}

/**
 * `GET /threads/{id}`: the stored row (or, for a thread that only exists as
 * checkpoints, a row dated at the latest checkpoint) with the full state as
 * `values`. Returns undefined when neither exists (→ 404).
 */
export function threadDetailResponse(
  threadId: string,
  record: ThreadRecord | undefined,
  snapshot: StateSnapshot | undefined,
  userId: string,
): ThreadResponse | undefined {
  if (!record && !snapshot) return undefined;
  const ts = snapshot?.createdAt ?? new Date().toISOString();
  const rec: ThreadRecord = record ?? { threadId, userId, status: "idle", metadata: {}, displayName: null, createdAt: ts, updatedAt: ts };
  return threadRecordResponse(rec, (snapshot?.values as Record<string, unknown> | undefined) ?? {}, deriveThreadStatus(record, snapshot));
}
