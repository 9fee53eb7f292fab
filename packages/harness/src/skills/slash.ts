/** `/skill-name rest…` at the very start of a user message. */
const SLASH_RE = /^\/([a-z0-9]+(?:-[a-z0-9]+)*)(?:\s+|$)/;

/** Slash commands that are never skills (the UI and channels own them). */
export const RESERVED_SLASH_NAMES: ReadonlySet<string> = new Set(["bootstrap", "goal", "help", "memory", "models", "new", "status"]);

/** A parsed slash activation. */
export interface SlashActivation {
  name: string;
  /** The text after the command (may be empty). */
  task: string;
}

/** Parse `/skill-name task` at the start of `text` (leading whitespace allowed); reserved names yield undefined. */
export function parseSlashSkill(text: string): SlashActivation | undefined {
  const trimmed = text.replace(/^\s+/, "");
  const m = SLASH_RE.exec(trimmed);
  if (!m?.[1] || RESERVED_SLASH_NAMES.has(m[1])) return undefined;
  return { name: m[1], task: trimmed.slice(m[0].length).trim() };
}
