import { contentText } from "../messages";

/** The parts of a clarification request (`artifact.human_input`) a client needs. */
export interface PendingClarification {
  request_id: string;
  question: string;
  /** The formatted question text (the tool message content). */
  text: string;
  source: string;
  input_mode: string;
  options: Array<{ id: string; label: string; value: string }>;
}

/** A readable answer plus the hidden `human_input_response` to send with it. */
export interface HumanInputAnswer {
  text: string;
  additionalKwargs: Record<string, unknown>;
}

/**
 * The open clarification request of a turn: the last message (wire dict or
 * client-serialised) when it is an `ask_clarification` tool result carrying
 * `artifact.human_input`. Undefined otherwise.
 */
export function findClarificationRequest(messages: ReadonlyArray<Record<string, unknown>>): PendingClarification | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.type !== "tool" || last.name !== "ask_clarification") return undefined;
  const hi = (last.artifact as { human_input?: Record<string, unknown> } | undefined)?.human_input;
  if (!hi || typeof hi !== "object" || typeof hi.request_id !== "string") return undefined;
  const content = last.content as Parameters<typeof contentText>[0];
  return {
    request_id: hi.request_id,
    question: typeof hi.question === "string" ? hi.question : contentText(content),
    text: contentText(content),
    source: typeof hi.source === "string" ? hi.source : "ask_clarification",
    input_mode: typeof hi.input_mode === "string" ? hi.input_mode : "free_text",
    options: Array.isArray(hi.options) ? (hi.options as PendingClarification["options"]) : [],
  };
}

/**
 * Build the answer to a clarification as DeerFlow's UI sends it
 * (the answer to an `ask_clarification` card): a human message with readable text and hidden
 * `additional_kwargs.human_input_response`. An answer that is an option's
 * number (`2`) or its exact label/value selects that option.
 */
export function buildHumanInputResponse(request: PendingClarification, answer: string): HumanInputAnswer {
  const trimmed = answer.trim();
  const byNumber = /^\d+$/.test(trimmed) ? request.options[Number(trimmed) - 1] : undefined;
  const option = byNumber ?? request.options.find((o) => o.label === trimmed || o.value === trimmed);
  const response: Record<string, unknown> = {
    version: 1,
    kind: "human_input_response",
    source: request.source,
    request_id: request.request_id,
    response_kind: option ? "option" : "text",
    value: option ? option.value : trimmed,
  };
  if (option) response.option_id = option.id;
  return {
    text: option ? option.label : trimmed,
    additionalKwargs: { hide_from_ui: true, human_input_response: response },
  };
}
