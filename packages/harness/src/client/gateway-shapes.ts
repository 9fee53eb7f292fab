import { z } from "zod";
import type { AppConfig } from "../config";

/** One entry of `GET /api/models` (deerflow-api.md §3.4). */
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

/** Build one {@link ModelInfo} from a `models:` entry. */
export function buildModelInfo(m: AppConfig["models"][number]): ModelInfo {
  return {
    name: m.name,
    model: m.model,
    display_name: m.display_name ?? null,
    description: m.description ?? null,
    supports_thinking: !!m.supports_thinking,
    supports_reasoning_effort: !!m.supports_reasoning_effort,
  };
}

/** Build the `GET /api/models` body from the app config (shared by gateway and client). */
export function buildModelsResponse(config: Pick<AppConfig, "models" | "token_usage">): ModelsResponse {
  return {
    models: config.models.map(buildModelInfo),
    token_usage: { enabled: config.token_usage?.enabled !== false },
  };
}

/** `ThreadResponse` of the LangGraph-compatible API (deerflow-api.md §2.2). */
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

/** Build a ThreadResponse (`interrupts` is always `{}`, as DeerFlow's gateway sends). */
export function buildThreadResponse(input: ThreadResponseInput): ThreadResponse {
  return {
    thread_id: input.threadId,
    status: input.status ?? "idle",
    created_at: input.createdAt,
    updated_at: input.updatedAt,
    metadata: toJsonSafe(input.metadata ?? {}),
    values: toJsonSafe(input.values ?? {}),
    interrupts: {},
  };
}
