import type { ModelEntry } from "@deerflow-ts/harness";

/** The chat commands every channel understands (DeerFlow's set). */
export const CHANNEL_COMMANDS = ["/new", "/status", "/models", "/memory", "/goal", "/help"] as const;

/** A parsed chat command. */
export interface ParsedCommand {
  /** Lower-case, with the slash (`/new`). */
  name: string;
  args: string;
}

/**
 * Read a command from a message: a leading `/word` (Telegram's `/word@bot`
 * suffix dropped; leading `@mentions` and `<@id>` tokens skipped, as group
 * chats put them first). Undefined when the text is not a command.
 */
export function parseCommand(text: string): ParsedCommand | undefined {
  let rest = text.trim();
  for (;;) {
    const m = /^(<@[^>]+>|@\S+)\s*/.exec(rest);
    if (!m) break;
    rest = rest.slice(m[0].length);
  }
  const m = /^(\/[A-Za-z][\w-]*)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(rest);
  if (!m) return undefined;
  return { name: m[1]!.toLowerCase(), args: (m[2] ?? "").trim() };
}

/** `/help`. */
export function helpText(): string {
  return [
    "Available commands:",
    "/new — Start a new conversation",
    "/status — Show the current conversation and its last run",
    "/models — List the available models",
    "/memory — Show what is remembered about you",
    "/goal [condition|clear] — Set, show or clear the conversation's goal",
    "/connect <code> — Link this chat to your DeerFlow account",
    "/help — Show this help",
  ].join("\n");
}

/** `/models`: the configured models, the default (first) marked. */
export function modelsText(models: readonly ModelEntry[]): string {
  if (!models.length) return "No models are configured.";
  const line = (m: ModelEntry, i: number): string => {
    const { name, display_name: label } = m as { name?: unknown; display_name?: unknown };
    return `• ${String(name)}${typeof label === "string" && label && label !== name ? ` (${label})` : ""}${i === 0 ? " — default" : ""}`;
  };
  return ["Available models:", ...models.map(line)].join("\n");
}
