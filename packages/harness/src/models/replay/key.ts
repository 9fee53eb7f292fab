import { createHash } from "node:crypto";
import type { Message } from "../../messages";
import { pythonJsonDumps } from "./python-json";

/** The caller of a model call when none is named: the agent loop's own turns. */
export const DEFAULT_REPLAY_CALLER = "lead_agent";

/** Caller names that are spelled two ways by the callers that make them. */
const CALLER_ALIASES: Record<string, string> = { title_agent: "middleware:title" };

// Volatile text a recording and a replay differ in without meaning anything different: each is
// replaced by a fixed placeholder before hashing, in this order. `\p{Nd}` because Python's `\d`
// matches every decimal digit, not only ASCII ones.
const SYSTEM_REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/gu;
// A role line left empty once its reminder was cut ("User: " and nothing else on the line).
const EMPTY_ROLE_LINE = /(?<![^\n])(?:User|Assistant):\s*(?:(?=\n)|(?![\s\S]))\n?/gu;
const BOUNDARY_BEGIN = /--- BEGIN USER INPUT ---\n?/gu;
const BOUNDARY_END = /\n?--- END USER INPUT ---/gu;
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/gu;
const ISO_TIMESTAMP = /\p{Nd}{4}-\p{Nd}{2}-\p{Nd}{2}[T ]\p{Nd}{2}:\p{Nd}{2}:\p{Nd}{2}(?:\.\p{Nd}+)?(?:Z|[+-]\p{Nd}{2}:?\p{Nd}{2})?/gu;
const DATE = /\p{Nd}{4}-\p{Nd}{2}-\p{Nd}{2}/gu;
const TEMP_PATH = /(?:\/private)?\/(?:var\/folders|tmp)\/[^\s"']*/gu;

/** Cut reminders and input boundaries, and replace UUIDs, timestamps, dates and temp paths by placeholders. */
export function normalizeReplayText(text: string): string {
  return text
    .replace(SYSTEM_REMINDER, "")
    .replace(EMPTY_ROLE_LINE, "")
    .replace(BOUNDARY_BEGIN, "")
    .replace(BOUNDARY_END, "")
    .replace(UUID, "<UUID>")
    .replace(ISO_TIMESTAMP, "<TS>")
    .replace(DATE, "<DATE>")
    .replace(TEMP_PATH, "<PATH>");
}

/** The caller as the key spells it: trimmed, normalised, aliased, `lead_agent` when empty. */
export function normalizeReplayCaller(caller: string | null | undefined): string {
  const value = normalizeReplayText((caller ?? "").trim());
  if (!value) return DEFAULT_REPLAY_CALLER;
  return CALLER_ALIASES[value] ?? value;
}

/** Message content as one text: text blocks by their text, other blocks as their JSON. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((block) => {
        if (block && typeof block === "object" && !Array.isArray(block)) {
          const text = (block as { text?: unknown }).text;
          return text ? String(text) : pythonJsonDumps(block);
        }
        return String(block);
      })
      .join("");
  }
  return String(content);
}

/**
 * The conversation part of a model call's input, as the text that is hashed: human, AI and tool
 * messages with their normalised text, tool calls (name and arguments) and name. The system prompt
 * and hidden messages (`additional_kwargs.hide_from_ui`: reminders, memory, activations) are left
 * out, and so are messages with neither text nor tool calls, so a key survives prompt edits.
 */
export function canonicalReplayConversation(messages: readonly Message[]): string {
  const projected: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (m.type === "system") continue;
    if (m.additional_kwargs?.hide_from_ui) continue;
    const content = normalizeReplayText(contentText(m.content));
    const toolCalls = m.type === "ai" ? m.tool_calls : [];
    if (!content.trim() && !toolCalls.length) continue;
    const entry: Record<string, unknown> = { type: m.type, content };
    if (toolCalls.length) entry.tool_calls = toolCalls.map((tc) => ({ name: tc.name, args: tc.args }));
    if (m.name) entry.name = m.name;
    projected.push(entry);
  }
  return normalizeReplayText(pythonJsonDumps(projected));
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** sha256 of {@link canonicalReplayConversation} (a fixture turn's `conversation_hash`). */
export function replayConversationHash(messages: readonly Message[]): string {
  return sha256(canonicalReplayConversation(messages));
}

/** A fixture turn's `input_hash`: sha256 of the caller and the conversation hash, as one JSON object. */
export function replayInputKey(conversationHash: string, caller: string | null | undefined): string {
  return sha256(pythonJsonDumps({ caller: normalizeReplayCaller(caller), conversation_hash: conversationHash }));
}
