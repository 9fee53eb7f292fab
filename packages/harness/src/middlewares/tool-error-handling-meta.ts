import type { ToolMessage } from "../messages";

/** `additional_kwargs` key of the structured tool-result metadata. */
export const TOOL_META_KEY = "deerflow_tool_meta";

/** Structured semantics of a tool result, read by downstream middlewares instead of parsing text. */
export interface ToolResultMeta {
  status: "success" | "error" | "partial_success";
  error_type: string | null;
  recoverable_by_model: boolean;
  recommended_next_action: "continue" | "rewrite_query" | "try_alternative" | "summarize" | "stop";
  source: "exception" | "tool_return" | "content_analysis" | "progress_middleware";
}

type ErrorAttrs = Pick<ToolResultMeta, "error_type" | "recoverable_by_model" | "recommended_next_action">;

const ERROR_RULES: Array<[string[], ErrorAttrs]> = [
  [["401", "403", "unauthorized", "authentication", "invalid api key"], { error_type: "auth", recoverable_by_model: false, recommended_next_action: "stop" }],
  [["rate limit", "rate limited", "rate_limit"], { error_type: "rate_limited", recoverable_by_model: false, recommended_next_action: "summarize" }],
  [
    ["timeout", "timed out", "connection", "network error", "temporarily unavailable"],
    { error_type: "transient", recoverable_by_model: false, recommended_next_action: "try_alternative" },
  ],
  [
    ["not configured", "not installed", "missing required", "disabled", "no api key"],
    { error_type: "config", recoverable_by_model: false, recommended_next_action: "stop" },
  ],
  [
    ["permission denied", "access denied", "path traversal", "forbidden"],
    { error_type: "permission", recoverable_by_model: true, recommended_next_action: "try_alternative" },
  ],
  [
    ["no results found", "no content found", "no images found", "no results"],
    { error_type: "no_results", recoverable_by_model: true, recommended_next_action: "rewrite_query" },
  ],
  [["not found", "no such file", "does not exist", "404"], { error_type: "not_found", recoverable_by_model: true, recommended_next_action: "rewrite_query" }],
  [["unexpected error", "internal error", "500"], { error_type: "internal", recoverable_by_model: false, recommended_next_action: "stop" }],
];

const UNKNOWN_ERROR: ErrorAttrs = { error_type: "unknown", recoverable_by_model: true, recommended_next_action: "try_alternative" };
const PARTIAL_MARKERS = ["partial results", "limited results", "truncated", "results may be incomplete", "no results found", "no content found", "no images found"];
const NO_ERROR_STRINGS = new Set(["none", "null", "false", "no", "ok", "success", "n/a", ""]);
const ERROR_PREFIX = "Error:";

/** A keyword test: numeric codes (`404`) match as whole words, other keywords as substrings. Built once. */
function keywordMatcher(kw: string): (lower: string) => boolean {
  if (!/^\d+$/.test(kw)) return (lower) => lower.includes(kw);
  const word = new RegExp(`\\b${kw}\\b`);
  return (lower) => word.test(lower);
}

const ERROR_MATCHERS: Array<[Array<(lower: string) => boolean>, ErrorAttrs]> = ERROR_RULES.map(([keywords, attrs]) => [keywords.map(keywordMatcher), attrs]);

/** Classify error text into error type / recoverability / next action. */
export function classifyToolErrorText(text: string): ErrorAttrs {
  const lower = text.toLowerCase();
  for (const [matchers, attrs] of ERROR_MATCHERS) if (matchers.some((m) => m(lower))) return { ...attrs };
  return { ...UNKNOWN_ERROR };
}

/**
 * Leading JSON whitespace then `{`: only such text can parse to a JSON
 * object, so other results (the common plain-text case) skip `JSON.parse`
 * and the exception it throws on non-JSON text.
 */
const JSON_OBJECT_START = /^[ \t\n\r]*\{/;

/** The JSON object `content` holds, or null (not JSON, or JSON that is not an object). */
function parseJsonObject(content: string): Record<string, unknown> | null {
  if (!JSON_OBJECT_START.test(content)) return null;
  try {
    const data: unknown = JSON.parse(content);
    return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function jsonErrorText(content: string): string | null {
  const data = parseJsonObject(content);
  if (!data) return null;
  const err = data.error;
  if (!err) return null;
  if (typeof err === "string") return NO_ERROR_STRINGS.has(err.toLowerCase().trim()) ? null : err;
  return JSON.stringify(err);
}

function isJsonObject(content: string): boolean {
  return parseJsonObject(content) !== null;
}

function meta(status: ToolResultMeta["status"], source: ToolResultMeta["source"], attrs?: Partial<ErrorAttrs>): ToolResultMeta {
  return {
    status,
    error_type: attrs?.error_type ?? null,
    recoverable_by_model: attrs?.recoverable_by_model ?? true,
    recommended_next_action: attrs?.recommended_next_action ?? "continue",
    source,
  };
}

/** Metadata of an exception-derived error result (always authoritative). */
export function exceptionMeta(errorInfo: string): ToolResultMeta {
  return meta("error", "exception", classifyToolErrorText(errorInfo));
}

/** Analyse a tool's own result (status, `Error:` prefix, JSON `error` field, partial markers). */
export function analyseToolResult(msg: ToolMessage): ToolResultMeta {
  const content = typeof msg.content === "string" ? msg.content : "";
  if (msg.status === "error" && !content.startsWith(ERROR_PREFIX)) {
    const je = jsonErrorText(content);
    const attrs = je !== null ? classifyToolErrorText(je) : isJsonObject(content) ? { ...UNKNOWN_ERROR } : classifyToolErrorText(content);
    return meta("error", "tool_return", attrs);
  }
  if (content.startsWith(ERROR_PREFIX)) return meta("error", "tool_return", classifyToolErrorText(content.slice(ERROR_PREFIX.length)));
  const je = jsonErrorText(content);
  if (je !== null) return meta("error", "tool_return", classifyToolErrorText(je));
  const lower = content.toLowerCase();
  if (PARTIAL_MARKERS.some((m) => lower.includes(m))) return meta("partial_success", "content_analysis", { recommended_next_action: "rewrite_query" });
  return meta("success", "content_analysis");
}

/** Copy of `msg` carrying `deerflow_tool_meta` (an existing stamp is kept). */
export function stampToolMeta(msg: ToolMessage): ToolMessage {
  if (msg.additional_kwargs?.[TOOL_META_KEY] != null) return msg;
  return { ...msg, additional_kwargs: { ...(msg.additional_kwargs ?? {}), [TOOL_META_KEY]: analyseToolResult(msg) } };
}
