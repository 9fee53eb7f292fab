import { UPDATER_PROMPT_OPENING } from "../../memory/updater-prompt";
import type { HttpScriptStep, RecordedLLMRequest } from "./script";

/** Where the demo writes its report in a thread's first turn (inside outputs, so it becomes an artifact). */
export const DEMO_REPORT_PATH = "/mnt/user-data/outputs/deerflow-demo.md";

/**
 * The report path of user turn `n` (1-based). Later turns of a thread get
 * their own file: overwriting the first one would (rightly) be refused
 * without reading it first.
 */
export function demoReportPath(turn: number): string {
  return turn <= 1 ? DEMO_REPORT_PATH : DEMO_REPORT_PATH.replace(/\.md$/, `-${turn}.md`);
}

/** A memory update that changes nothing. */
const EMPTY_MEMORY_UPDATE = { user: {}, history: {}, newFacts: [], factsToRemove: [] };

/** True when the request is the memory updater's (its system prompt, OpenAI or Anthropic wire form). */
function isMemoryUpdaterCall(body: Record<string, unknown>): boolean {
  if (typeof body.system === "string" && body.system.startsWith(UPDATER_PROMPT_OPENING)) return true;
  if (Array.isArray(body.system) && textOf(body.system).startsWith(UPDATER_PROMPT_OPENING)) return true;
  const messages = Array.isArray(body.messages) ? (body.messages as WireMessage[]) : [];
  return messages.some((m) => m && m.role === "system" && textOf(m.content).startsWith(UPDATER_PROMPT_OPENING));
}

/** The one command that replaces the demo with a real model. */
export const DEMO_CONFIGURE_COMMAND = "npx deerflow init";

type WireMessage = Record<string, unknown>;

interface TurnSoFar {
  /** The user's words of this turn (input-boundary markers removed). */
  userText: string;
  /** Tool names the assistant called since that user message, in order. */
  called: string[];
  /** Text of the tool results since that user message, in order. */
  results: string[];
  /** Tool names the request offers. */
  offered: Set<string>;
  /** 1-based number of this user turn in the thread. */
  number: number;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => {
      if (!b || typeof b !== "object") return "";
      const block = b as { text?: unknown; content?: unknown };
      return typeof block.text === "string" ? block.text : typeof block.content === "string" || Array.isArray(block.content) ? textOf(block.content) : "";
    })
    .join("");
}

/** An Anthropic user message that only carries tool results is not the user speaking. */
function isToolResultCarrier(m: WireMessage): boolean {
  return Array.isArray(m.content) && (m.content as WireMessage[]).some((b) => b && b.type === "tool_result");
}

function toolNamesOf(m: WireMessage): string[] {
  const openai = Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{ function?: { name?: unknown } }>).map((c) => String(c.function?.name ?? "")) : [];
  const anthropic = Array.isArray(m.content) ? (m.content as WireMessage[]).filter((b) => b && b.type === "tool_use").map((b) => String(b.name ?? "")) : [];
  return [...openai, ...anthropic];
}

function offeredTools(body: Record<string, unknown>): Set<string> {
  const tools = Array.isArray(body.tools) ? (body.tools as WireMessage[]) : [];
  return new Set(tools.map((t) => String(((t.function ?? t) as { name?: unknown }).name ?? "")));
}

/**
 * Where this request stands in the current turn. Each thread is independent
 * and the server keeps no state per thread, so the position comes from the
 * conversation the request carries: everything after the last real user
 * message.
 */
function turnSoFar(body: Record<string, unknown>): TurnSoFar {
  const messages = Array.isArray(body.messages) ? (body.messages as WireMessage[]) : [];
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user" && !isToolResultCarrier(messages[i])) {
      start = i;
      break;
    }
  }
  const number = messages.filter((m) => m.role === "user" && !isToolResultCarrier(m)).length;
  const turn: TurnSoFar = { userText: "", called: [], results: [], offered: offeredTools(body), number };
  if (start >= 0) {
    turn.userText = textOf(messages[start].content)
      .replace(/--- (BEGIN|END) USER INPUT ---/g, "")
      .replace(/<current_uploads>[\s\S]*?<\/current_uploads>/g, "")
      .trim();
  }
  for (const m of messages.slice(start + 1)) {
    if (m.role === "assistant") turn.called.push(...toolNamesOf(m));
    else if (m.role === "tool") turn.results.push(textOf(m.content));
    else if (isToolResultCarrier(m)) for (const b of m.content as WireMessage[]) if (b.type === "tool_result") turn.results.push(textOf(b.content));
  }
  return turn;
}

function report(userText: string, file: string): string {
  const quoted = (userText || "(an empty message)").slice(0, 400).split("\n").map((l) => `> ${l}`).join("\n");
  return [
    "# DeerFlow demo report",
    "",
    "This file was written by the **scripted demo model**: a test double that plays a fixed script.",
    "It is not an LLM and did not read or reason about your message.",
    "",
    "## Your message",
    "",
    quoted,
    "",
    "## What the harness just did",
    "",
    "1. The model asked for the `write_file` tool; the harness ran it inside this thread's sandbox",
    `   and wrote \`${file}\`.`,
    "2. The model asked for `present_files`; the harness checked the path is under `outputs/`",
    "   and listed the file as an artifact of the thread.",
    "3. The model wrote a final answer, streamed token by token.",
    "",
    "## Use a real model",
    "",
    `Run \`${DEMO_CONFIGURE_COMMAND}\`, answer its questions (the key goes to \`.env\` only), then restart.`,
    "",
  ].join("\n");
}

const looksFailed = (result: string | undefined) => !result || /^error\b|^\s*Error:/i.test(result.trim());

/**
 * The demo script of `npm start` without a config (and of
 * `deerflow scripted-llm --demo`): for ANY user message, every time, it
 * says it is scripted, writes a small Markdown report with `write_file`,
 * presents it with `present_files`, and ends with a final answer. It reads
 * where it is in the turn from the request itself and says so honestly when
 * a tool is not offered or failed. A test double, not a model.
 */
export function demoStep(request: RecordedLLMRequest): HttpScriptStep {
  // The memory updater asks the same model for a JSON update after each run: the demo remembers nothing,
  // in the shape the updater accepts, instead of a chat answer that fails to parse on every run.
  if (isMemoryUpdaterCall(request.body ?? {})) return JSON.stringify(EMPTY_MEMORY_UPDATE);
  const turn = turnSoFar(request.body ?? {});
  const file = demoReportPath(turn.number);
  const writeIndex = turn.called.indexOf("write_file");
  if (writeIndex < 0) {
    if (!turn.offered.has("write_file")) {
      return (
        "This is the scripted DeerFlow demo (a test double, not an LLM). It would now write a report with the " +
        `\`write_file\` tool, but this agent is not offered that tool. Add the sandbox tools to \`tools:\` in config.yaml, or run \`${DEMO_CONFIGURE_COMMAND}\`.`
      );
    }
    return {
      text: "This is the scripted DeerFlow demo (a test double, not an LLM). I will write a short report to show a tool step and an artifact.",
      toolCalls: [{ name: "write_file", args: { description: "Write the demo report", path: file, content: report(turn.userText, file) } }],
    };
  }
  const writeResult = turn.results[writeIndex];
  if (looksFailed(writeResult)) {
    return `The scripted demo tried to write ${file}, but the tool failed: ${(writeResult ?? "no result").slice(0, 300)}`;
  }
  const presentIndex = turn.called.indexOf("present_files");
  if (presentIndex < 0 && turn.offered.has("present_files")) {
    return { text: "The report is written. Presenting it so it shows up as an artifact.", toolCalls: [{ name: "present_files", args: { filepaths: [file] } }] };
  }
  if (presentIndex >= 0 && looksFailed(turn.results[presentIndex])) {
    return `The scripted demo wrote ${file}, but presenting it failed: ${(turn.results[presentIndex] ?? "no result").slice(0, 300)}`;
  }
  return [
    `Done: I wrote \`${file}\` and presented it (open it from the artifacts).`,
    "",
    "Everything in this answer was **scripted** — the demo model plays the same steps for any message, so it did not understand yours.",
    `To work with a real model, run \`${DEMO_CONFIGURE_COMMAND}\`.`,
  ].join("\n");
}
