import { createHash } from "node:crypto";
import { boundText } from "../text";

/**
 * The structured result contract of a `task` ToolMessage. The text is what
 * the lead model reads; `additional_kwargs` carries the machine-readable
 * facts the ledger, the token-usage middleware and the UIs read instead of
 * parsing text. Key names and status values match DeerFlow's wire contract,
 * so DeerFlow's frontend reads our threads unchanged.
 */

/** `additional_kwargs` keys. */
export const SUBAGENT_STATUS_KEY = "subagent_status";
export const SUBAGENT_STOP_REASON_KEY = "subagent_stop_reason";
export const SUBAGENT_ERROR_KEY = "subagent_error";
export const SUBAGENT_RESULT_BRIEF_KEY = "subagent_result_brief";
export const SUBAGENT_RESULT_SHA256_KEY = "subagent_result_sha256";
export const SUBAGENT_MODEL_NAME_KEY = "subagent_model_name";
export const SUBAGENT_TOKEN_USAGE_KEY = "subagent_token_usage";
export const SUBAGENT_ACCEPTANCE_VERDICT_KEY = "subagent_acceptance_verdict";

/** Cap of the brief and error texts carried in metadata. */
export const SUBAGENT_METADATA_TEXT_MAX_CHARS = 2000;

/** Terminal statuses a `task` result can carry. */
export const SUBAGENT_STATUS_VALUES = ["completed", "failed", "cancelled", "timed_out", "polling_timed_out"] as const;
/** A terminal status of a delegation. */
export type SubagentStatusValue = (typeof SUBAGENT_STATUS_VALUES)[number];

/** Why a guardrail cap ended a sub-agent early (additive to the status). */
export const SUBAGENT_STOP_REASON_VALUES = ["token_capped", "turn_capped", "loop_capped"] as const;
/** A guardrail cap reason. */
export type SubagentStopReasonValue = (typeof SUBAGENT_STOP_REASON_VALUES)[number];

const STOP_REASON_LABELS: Record<SubagentStopReasonValue, string> = {
  token_capped: "token budget",
  turn_capped: "turn budget",
  loop_capped: "repeated tool-call loop",
};

/** Cumulative token usage of one sub-agent. */
export interface SubagentTokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Keep head 2/3 and tail within `cap` chars, joined by `\n...\n` (deterministic, not a summary). */
export function boundResultText(text: string, cap: number = SUBAGENT_METADATA_TEXT_MAX_CHARS): string {
  return boundText(text, cap);
}

/** Lowercase hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Validate a usage mapping: all three keys non-negative integers (booleans rejected), else `null`. */
export function normalizeTokenUsage(value: unknown): SubagentTokenUsage | null {
  if (!value || typeof value !== "object") return null;
  const r = value as Record<string, unknown>;
  const out: Partial<SubagentTokenUsage> = {};
  for (const key of ["input_tokens", "output_tokens", "total_tokens"] as const) {
    const v = r[key];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) return null;
    out[key] = v;
  }
  return out as SubagentTokenUsage;
}

function isStatus(v: unknown): v is SubagentStatusValue {
  return typeof v === "string" && (SUBAGENT_STATUS_VALUES as readonly string[]).includes(v);
}

function isStopReason(v: unknown): v is SubagentStopReasonValue {
  return typeof v === "string" && (SUBAGENT_STOP_REASON_VALUES as readonly string[]).includes(v);
}

/** Inputs of {@link makeSubagentAdditionalKwargs} and {@link formatSubagentResultMessage}. */
export interface SubagentResultFields {
  result?: string | null;
  error?: string | null;
  stopReason?: SubagentStopReasonValue | null;
  modelName?: string | null;
  tokenUsage?: unknown;
}

/**
 * The `additional_kwargs` of a terminal `task` ToolMessage. Only `completed`
 * carries the brief and digest; every other status carries the error. An
 * unknown status or stop reason is a programming error and throws.
 */
export function makeSubagentAdditionalKwargs(status: SubagentStatusValue, fields: SubagentResultFields = {}): Record<string, unknown> {
  if (!isStatus(status)) throw new TypeError(`invalid subagent status ${JSON.stringify(status)}`);
  if (fields.stopReason != null && !isStopReason(fields.stopReason)) {
    throw new TypeError(`invalid subagent stop_reason ${JSON.stringify(fields.stopReason)}`);
  }
  const out: Record<string, unknown> = { [SUBAGENT_STATUS_KEY]: status };
  const result = typeof fields.result === "string" ? fields.result : "";
  if (status === "completed" && result.trim()) {
    out[SUBAGENT_RESULT_BRIEF_KEY] = boundResultText(result.trim());
    out[SUBAGENT_RESULT_SHA256_KEY] = sha256Hex(result);
  }
  const error = typeof fields.error === "string" ? fields.error.trim() : "";
  if (status !== "completed" && error) out[SUBAGENT_ERROR_KEY] = boundResultText(error);
  if (fields.stopReason) out[SUBAGENT_STOP_REASON_KEY] = fields.stopReason;
  const model = typeof fields.modelName === "string" ? fields.modelName.trim() : "";
  if (model) out[SUBAGENT_MODEL_NAME_KEY] = model;
  const usage = normalizeTokenUsage(fields.tokenUsage);
  if (usage) out[SUBAGENT_TOKEN_USAGE_KEY] = usage;
  return out;
}

/**
 * The model-visible text of a terminal `task` result. A cap that still left
 * usable text stays `completed` with a `(capped: …)` note, so the lead can
 * tell "ran out of budget" from "broken sub-agent" without metadata.
 */
export function formatSubagentResultMessage(status: SubagentStatusValue, fields: SubagentResultFields = {}): string {
  const result = fields.result == null ? "" : String(fields.result);
  const error = typeof fields.error === "string" ? fields.error.trim() : "";
  const capped = fields.stopReason ? STOP_REASON_LABELS[fields.stopReason] : undefined;
  switch (status) {
    case "completed":
      return capped ? `Task Succeeded (capped: ${capped}). Result: ${result}` : `Task Succeeded. Result: ${result}`;
    case "cancelled": {
      const base = "Task cancelled by user.";
      return !error || error === base ? base : `${base} Error: ${error}`;
    }
    case "timed_out": {
      const base = "Task timed out.";
      return !error || error === base ? base : `${base} Error: ${error}`;
    }
    case "polling_timed_out":
      return error || "Task polling timed out.";
    default: {
      const detail = error || "Task failed.";
      if (capped) return detail === "Task failed." ? `Task failed (capped: ${capped}).` : `Task failed (capped: ${capped}). Error: ${detail}`;
      return detail === "Task failed." ? detail : `Task failed. Error: ${detail}`;
    }
  }
}

/** What {@link readSubagentResultMetadata} extracts. */
export interface StructuredSubagentResult {
  status: SubagentStatusValue;
  stopReason?: SubagentStopReasonValue;
  resultBrief?: string;
  resultSha256?: string;
  error?: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Read the contract back from `additional_kwargs` (`null` when absent or
 * invalid). The legacy status `max_turns_reached` maps to `turn_capped`:
 * completed when a brief survived, failed otherwise.
 */
export function readSubagentResultMetadata(kwargs: Record<string, unknown> | null | undefined): StructuredSubagentResult | null {
  if (!kwargs) return null;
  const raw = kwargs[SUBAGENT_STATUS_KEY];
  const brief = kwargs[SUBAGENT_RESULT_BRIEF_KEY];
  let status: SubagentStatusValue;
  let legacyStop: SubagentStopReasonValue | undefined;
  if (raw === "max_turns_reached") {
    legacyStop = "turn_capped";
    status = typeof brief === "string" && brief.trim() ? "completed" : "failed";
  } else if (isStatus(raw)) {
    status = raw;
  } else {
    return null;
  }
  const out: StructuredSubagentResult = { status };
  if (status === "completed" && typeof brief === "string" && brief.trim()) {
    out.resultBrief = boundResultText(brief.trim());
    const sha = kwargs[SUBAGENT_RESULT_SHA256_KEY];
    if (typeof sha === "string" && SHA256_HEX.test(sha)) out.resultSha256 = sha;
  }
  const err = kwargs[SUBAGENT_ERROR_KEY];
  if (status !== "completed" && typeof err === "string" && err.trim()) out.error = boundResultText(err.trim());
  const stop = kwargs[SUBAGENT_STOP_REASON_KEY];
  if (isStopReason(stop)) out.stopReason = stop;
  else if (legacyStop) out.stopReason = legacyStop;
  return out;
}
