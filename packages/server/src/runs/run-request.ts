import { Command, coerceMessage, readRuntimeOptions, unknownModelError, ValidationError } from "@deerflow-ts/harness";
import type { ModelEntry, RunInput, RunRequest, RunSettings, StreamMode } from "@deerflow-ts/harness";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HttpError } from "../http-error";
import { redactSecrets } from "./run-response";

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
 * `RunCreateRequest` of DeerFlow's LangGraph-compatible API, with `extra="forbid"`: unknown
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
  // refused rather than accepted and ignored: a run that should have paused before a node must not run past it
  interrupt_before: z
    .union([z.literal("*"), z.array(z.string())])
    .nullable()
    .optional()
    .refine((v) => v === null || v === undefined || (Array.isArray(v) && v.length === 0), { message: "interrupt_before is not supported yet: pausing at a node is not implemented" }),
  // refused rather than accepted and ignored: a run that should have paused before a node must not run past it
  interrupt_after: z
    .union([z.literal("*"), z.array(z.string())])
    .nullable()
    .optional()
    .refine((v) => v === null || v === undefined || (Array.isArray(v) && v.length === 0), { message: "interrupt_after is not supported yet: pausing at a node is not implemented" }),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
  stream_resumable: z.literal(false).nullable().optional(),
  if_not_exists: z.literal("create").nullable().optional(),
  // `runs.wait`: the SDK raises from the answer's `__error__` (see runAnswer); any route accepts it, as LangGraph's do
  raise_error: z.boolean().nullable().optional(),
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

const HARNESS_MODE: Record<ClientStreamMode, StreamMode> = {
  values: "values",
  "messages-tuple": "messages",
  updates: "updates",
  debug: "debug",
  tasks: "tasks",
  checkpoints: "checkpoints",
  custom: "custom",
};

/** What {@link toRunRequest} needs besides the body. */
export interface RunRequestContext {
  threadId: string;
  /** The caller's id: the run's files, memory, agents, skills and sessions are that user's. */
  userId: string;
  /** The configured models now (a `model_name` must be one of them). */
  models: readonly ModelEntry[];
  /** Clamp of `config.recursion_limit`. */
  maxRecursionLimit: number;
}

/**
 * Turn a validated run body into the harness's typed {@link RunRequest}:
 * the whitelisted context keys, the settings parsed once, the identity the
 * server assigns (never the request's), the input checked message by
 * message. Throws HttpError on client mistakes.
 */
export function toRunRequest(req: RunCreateRequest, at: RunRequestContext): RunRequest {
  const { threadId, userId } = at;
  const runId = randomUUID();
  const agentName = agentNameFromAssistant(req.assistant_id);
  if (agentName === null) {
    throw new HttpError(422, `Invalid assistant_id '${req.assistant_id}': agent names must match [a-z0-9-]+`);
  }
  const configurable: Record<string, unknown> = { ...(req.config?.configurable ?? {}) };
  const source: Record<string, unknown> = { ...(req.context ?? {}), ...(req.config?.context ?? {}) };
  const context: Record<string, unknown> = {};
  for (const key of CONTEXT_WHITELIST) {
    if (source[key] !== undefined) context[key] = source[key];
  }
  if (agentName) context.agent_name = agentName;
  // One rule for a requested model wherever it is given (context, config.context or config.configurable):
  // a name that is not configured is a 400 listing the configured ones, never a silent fallback.
  for (const requested of [context.model_name, configurable.model_name]) {
    if (requested === undefined || requested === null) continue;
    const unknown = unknownModelError(String(requested), at.models);
    // DeerFlow's wording first (clients match on it), then the names that would work
    if (unknown) throw new HttpError(400, `Model '${String(requested)}' is not in the configured model allowlist. Configured models: ${at.models.map((m) => m.name).join(", ")}`);
  }
  Object.assign(configurable, context, { thread_id: threadId });
  // The run's identity is the server's: the caller (signed-in user) and ids it assigned, never the request's.
  delete configurable.user_id;
  delete configurable.run_id;
  Object.assign(context, { thread_id: threadId, run_id: runId, user_id: userId });
  // Request-scoped skill secrets (`required-secrets`) go to the run context only: never configurable or metadata.
  if (source.secrets && typeof source.secrets === "object" && !Array.isArray(source.secrets)) context.secrets = source.secrets;
  let settings: RunSettings;
  try {
    settings = readRuntimeOptions(configurable, context);
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(422, err.message);
    throw err;
  }
  const modes = requestedModes(req);
  return {
    threadId,
    runId,
    userId,
    assistantId: req.assistant_id ?? "lead_agent",
    input: runInput(req),
    settings,
    recursionLimit: Math.min(Math.max(1, req.config?.recursion_limit ?? 100), at.maxRecursionLimit),
    streamModes: modes.map((m) => HARNESS_MODE[m]),
    subgraphs: req.stream_subgraphs === true,
    context,
    configurable,
    metadata: { ...(req.metadata ?? {}) },
    checkpointId: req.checkpoint?.checkpoint_id ?? req.checkpoint_id ?? undefined,
    strategy: req.multitask_strategy ?? "reject",
    kwargs: redactSecrets({ input: req.input ?? null, command: req.command ?? null, config: req.config ?? {}, context: req.context ?? {} }) as Record<string, unknown>,
    onDisconnect: req.on_disconnect ?? "cancel",
  };
}

/** The run's input: a `Command` resuming an interrupt, the new messages (each checked), or null. */
function runInput(req: RunCreateRequest): RunInput {
  if (req.command && req.command.resume !== undefined) return new Command({ resume: req.command.resume });
  if (!req.input) return null;
  const messages = req.input.messages;
  if (messages !== undefined) {
    if (!Array.isArray(messages)) throw new HttpError(400, "Invalid message at input.messages: expected a list");
    messages.forEach((m, i) => {
      try {
        coerceMessage(m, `input.messages[${i}]`);
      } catch (err) {
        throw new HttpError(400, err instanceof ValidationError ? err.message : `Invalid message at input.messages[${i}]`);
      }
    });
  }
  return { ...req.input };
}
