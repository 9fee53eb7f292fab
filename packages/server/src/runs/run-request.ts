import { z } from "zod";

/** Stream modes a client may request. */
export const ACCEPTED_STREAM_MODES = ["values", "messages-tuple", "updates", "debug", "tasks", "checkpoints", "custom"] as const;

/** A client stream mode. */
export type ClientStreamMode = (typeof ACCEPTED_STREAM_MODES)[number];

const streamMode = z.enum(ACCEPTED_STREAM_MODES, {
  error: (issue) =>
    `Unsupported stream mode ${JSON.stringify(issue.input)}; supported: ${ACCEPTED_STREAM_MODES.join(", ")}`,
});

const nullish = (what: string) =>
  z
    .unknown()
    .refine((v) => v === null || v === undefined, { message: `${what} is not supported` })
    .optional();

/**
 * `RunCreateRequest` of the contract (§2.4), with `extra="forbid"`: unknown
 * top-level keys are a 422.
 */
export const runCreateRequestSchema = z.strictObject({
  assistant_id: z.string().min(1).max(128).optional(),
  input: z.record(z.string(), z.unknown()).nullable().optional(),
  command: z
    .object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() })
    .nullable()
    .optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  config: z
    .looseObject({
      recursion_limit: z.number().int().min(1).optional(),
      configurable: z.record(z.string(), z.unknown()).optional(),
      context: z.record(z.string(), z.unknown()).optional(),
      tags: z.array(z.string()).optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .nullable()
    .optional(),
  context: z.record(z.string(), z.unknown()).nullable().optional(),
  checkpoint: z.looseObject({ checkpoint_id: z.string().optional(), checkpoint_ns: z.string().optional() }).nullable().optional(),
  checkpoint_id: z.string().nullable().optional(),
  stream_mode: z.union([streamMode, z.array(streamMode)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  interrupt_before: z.union([z.literal("*"), z.array(z.string())]).nullable().optional(),
  interrupt_after: z.union([z.literal("*"), z.array(z.string())]).nullable().optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
  stream_resumable: z.literal(false).nullable().optional(),
  if_not_exists: z.literal("create").nullable().optional(),
  webhook: nullish("webhook"),
  on_completion: nullish("on_completion"),
  after_seconds: nullish("after_seconds"),
  feedback_keys: nullish("feedback_keys"),
});

/** A validated run creation body. */
export type RunCreateRequest = z.infer<typeof runCreateRequestSchema>;

/** `context` keys the gateway copies into `configurable` and the runtime context. */
export const CONTEXT_WHITELIST = [
  "model_name",
  "mode",
  "thinking_enabled",
  "reasoning_effort",
  "is_plan_mode",
  "subagent_enabled",
  "max_concurrent_subagents",
  "max_total_subagents",
  "agent_name",
  "is_bootstrap",
] as const;

/** Requested stream modes, deduplicated, default `["values"]`. */
export function requestedModes(req: RunCreateRequest): ClientStreamMode[] {
  const raw = req.stream_mode === undefined ? ["values" as const] : Array.isArray(req.stream_mode) ? req.stream_mode : [req.stream_mode];
  return [...new Set(raw)];
}

/**
 * Normalise a custom agent name from `assistant_id` (lower-case, `_`→`-`).
 * `undefined` for the lead agent, `null` when the name is invalid.
 */
export function agentNameFromAssistant(assistantId: string | undefined): string | null | undefined {
  if (!assistantId || assistantId === "lead_agent") return undefined;
  const name = assistantId.toLowerCase().replace(/_/g, "-");
  return /^[a-z0-9-]+$/.test(name) ? name : null;
}
