import { createHash } from "node:crypto";

/** Max fields of a v2 form. */
export const MAX_FORM_FIELDS = 16;
/** Max options of one select field. */
export const MAX_FIELD_OPTIONS = 24;
/** Max chars of a name/label/option/placeholder. */
export const MAX_FIELD_TEXT_CHARS = 200;
/** Max serialized size (UTF-8 bytes) of the normalized fields. */
export const MAX_FORM_SERIALIZED_BYTES = 16_384;

const FIELD_TYPES = new Set(["text", "textarea", "number", "select", "multi_select", "checkbox", "date"]);
const OPTION_TYPES = new Set(["select", "multi_select"]);
const RESERVED_NAMES = new Set([
  "__proto__", "constructor", "prototype", "toString", "toLocaleString", "valueOf", "hasOwnProperty",
  "isPrototypeOf", "propertyIsEnumerable", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
]);
const XML_TAG_RE = /<\/?[A-Za-z_][\w:.-]*(?:\s[^<>]*?)?\s*\/?>/g;

/** One option of a choice / select field. */
export interface HumanInputOption {
  id: string;
  label: string;
  value: string;
}

/** One normalized v2 form field. */
export interface HumanInputField {
  name: string;
  label: string;
  type: string;
  required: boolean;
  options?: HumanInputOption[];
  placeholder?: string;
}

/** `artifact.human_input` of a clarification ToolMessage (what the web UI renders as a clarification card). */
export interface HumanInputRequest {
  version: 1 | 2;
  kind: "human_input_request";
  source: "ask_clarification";
  request_id: string;
  tool_call_id?: string;
  clarification_type: string;
  question: string;
  context?: string | null;
  input_mode: "free_text" | "choice_with_other" | "form";
  options?: HumanInputOption[];
  fields?: HumanInputField[];
}

function flattenLeaves(v: unknown, out: unknown[]): void {
  if (Array.isArray(v)) v.forEach((x) => flattenLeaves(x, out));
  else if (v && typeof v === "object") Object.values(v).forEach((x) => flattenLeaves(x, out));
  else if (typeof v === "string" || typeof v === "number") out.push(v);
}

function pyStr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** Options as display strings: JSON text parsed, dicts flattened, XML tags stripped, deduped. */
export function normalizeOptions(raw: unknown): string[] {
  let options: unknown = raw;
  if (typeof options === "string") {
    try {
      options = JSON.parse(options);
    } catch {
      options = [options];
    }
  }
  if (options == null) return [];
  if (!Array.isArray(options)) {
    if (typeof options === "object") {
      const flat: unknown[] = [];
      flattenLeaves(options, flat);
      options = flat;
    } else options = [options];
  }
  const out: string[] = [];
  for (const o of options as unknown[]) {
    const text = pyStr(o).replace(XML_TAG_RE, "").trim();
    if (text && !out.includes(text)) out.push(text);
  }
  return out;
}

function toBool(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.trim().toLowerCase() === "true";
  return false;
}

/**
 * Normalize form fields atomically: any broken entry (bad/reserved/duplicate
 * name, over a cap) returns `[]` so the request degrades to v1. Unknown types
 * and option-less selects become `text`.
 */
export function normalizeFields(raw: unknown): HumanInputField[] {
  let fields: unknown = raw;
  if (typeof fields === "string") {
    try {
      fields = JSON.parse(fields);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(fields) || fields.length > MAX_FORM_FIELDS) return [];
  const out: HumanInputField[] = [];
  const seen = new Set<string>();
  for (const entry of fields) {
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) return [];
    const e = entry as Record<string, unknown>;
    if (typeof e.name !== "string" || !e.name.trim()) return [];
    const name = e.name.trim();
    if (RESERVED_NAMES.has(name) || seen.has(name) || name.length > MAX_FIELD_TEXT_CHARS) return [];
    seen.add(name);
    const label = typeof e.label === "string" && e.label.trim() ? e.label.trim() : name;
    if (label.length > MAX_FIELD_TEXT_CHARS) return [];
    let type = typeof e.type === "string" && FIELD_TYPES.has(e.type) ? e.type : "text";
    const options = OPTION_TYPES.has(type) ? normalizeOptions(e.options) : [];
    if (options.length > MAX_FIELD_OPTIONS || options.some((o) => o.length > MAX_FIELD_TEXT_CHARS)) return [];
    if (OPTION_TYPES.has(type) && !options.length) type = "text";
    const field: HumanInputField = { name, label, type, required: toBool(e.required) };
    if (OPTION_TYPES.has(type)) field.options = options.map((o, i) => ({ id: `${name}-option-${i + 1}`, label: o, value: o }));
    if (typeof e.placeholder === "string" && e.placeholder.trim()) {
      if (e.placeholder.trim().length > MAX_FIELD_TEXT_CHARS) return [];
      field.placeholder = e.placeholder.trim();
    }
    out.push(field);
  }
  if (Buffer.byteLength(JSON.stringify(out), "utf8") > MAX_FORM_SERIALIZED_BYTES) return [];
  return out;
}

/** Stable request/message id: `clarification:{tool_call_id}` or a content digest. */
export function clarificationRequestId(toolCallId: string, text: string): string {
  if (toolCallId) return `clarification:${toolCallId}`;
  return `clarification:${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)}`;
}

const ICONS: Record<string, string> = {
  missing_info: "❓",
  ambiguous_requirement: "🤔",
  approach_choice: "🔀",
  risk_confirmation: "⚠️",
  suggestion: "💡",
};

/** The plain-text question: `{icon} {context}\n{question}` plus numbered options or fields. */
export function formatClarification(args: Record<string, unknown>, fields: HumanInputField[]): string {
  const question = args.question == null ? "" : pyStr(args.question);
  const type = args.clarification_type == null ? "missing_info" : pyStr(args.clarification_type);
  const icon = ICONS[type] ?? "❓";
  const options = normalizeOptions(args.options ?? []);
  const parts: string[] = [];
  if (args.context) {
    parts.push(`${icon} ${pyStr(args.context)}`);
    parts.push(`\n${question}`);
  } else {
    parts.push(`${icon} ${question}`);
  }
  if (fields.length) {
    parts.push("");
    fields.forEach((f, i) => {
      let line = `  ${i + 1}. ${f.label}`;
      if (f.required) line += " (required)";
      if (f.options?.length) {
        line += " — options: " + f.options.map((o) => o.label).join(" / ");
        if (f.type === "multi_select") line += " (multiple allowed)";
      }
      parts.push(line);
    });
    parts.push("");
    parts.push("Please reply with a value for each field.");
  } else if (options.length) {
    parts.push("");
    options.forEach((o, i) => parts.push(`  ${i + 1}. ${o}`));
  }
  return parts.join("\n");
}

/** The `human_input` payload (v2 `form` when fields survive normalization, else v1). */
export function buildHumanInputRequest(
  args: Record<string, unknown>,
  ids: { toolCallId: string; requestId: string },
  fields: HumanInputField[],
): HumanInputRequest {
  const options = normalizeOptions(args.options ?? []);
  const mode = fields.length ? "form" : options.length ? "choice_with_other" : "free_text";
  const payload: HumanInputRequest = {
    version: fields.length ? 2 : 1,
    kind: "human_input_request",
    source: "ask_clarification",
    request_id: ids.requestId,
    clarification_type: args.clarification_type == null ? "missing_info" : pyStr(args.clarification_type),
    question: args.question ? pyStr(args.question) : "",
    input_mode: mode,
  };
  if (ids.toolCallId) payload.tool_call_id = ids.toolCallId;
  if ("context" in args) payload.context = args.context == null ? null : pyStr(args.context);
  if (mode === "form") payload.fields = fields;
  else if (options.length) payload.options = options.map((o, i) => ({ id: `option-${i + 1}`, label: o, value: o }));
  return payload;
}
