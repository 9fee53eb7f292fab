/**
 * One scripted-model step that answers every request by what the latest
 * human message asks for, so runs executed by different server processes
 * (and resumed ones) get the answers their test expects from one scripted
 * OpenAI-compatible server:
 *
 * - `[slow MS] …`: answer after MS ms.
 * - `[stream N MS] …`: an answer of N words, MS ms between chunks.
 * - `[hang] …`: never answer (until the caller aborts: a cancel).
 * - `[crash TAG] …`: a tool call (`ls`), then, after the tool result, hang the
 *   first time (the process is killed meanwhile) and answer `resumed TAG`
 *   when asked again (by the process that took the run over).
 * - `[bench MS] …`: a tool call, then an answer, each after MS ms (two model
 *   calls per run, as in the scale bench).
 * - anything else: `answer: <text>`.
 */
import type { HttpScriptStep, RecordedLLMRequest } from "@deerflow-ts/harness/testing";

interface WireMessage {
  role?: string;
  content?: unknown;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : typeof (p as { text?: unknown })?.text === "string" ? (p as { text: string }).text : "")).join("");
  return "";
}

/** The latest human text and whether the request comes after a tool result. */
export function requestShape(req: RecordedLLMRequest): { human: string; afterTool: boolean } {
  const messages = (req.body?.messages ?? []) as WireMessage[];
  let human = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") {
      human = textOf(messages[i]!.content);
      break;
    }
  }
  return { human, afterTool: messages[messages.length - 1]?.role === "tool" };
}

/** A router step and what it saw (tags that hung once). */
export function scriptedRouter(): { step: HttpScriptStep; hung: Set<string> } {
  const hung = new Set<string>();
  const step: HttpScriptStep = (req) => {
    const { human, afterTool } = requestShape(req);
    const m = /\[(\w+)([^\]]*)\]/.exec(human);
    const args = (m?.[2] ?? "").trim().split(/\s+/).filter(Boolean);
    switch (m?.[1]) {
      case "slow":
        return { text: `answer: ${human}`, delayMs: Number(args[0] ?? 100) };
      case "stream": {
        const words = Array.from({ length: Number(args[0] ?? 20) }, (_, i) => `w${i}`).join(" ");
        return { text: words, chunkDelayMs: Number(args[1] ?? 20) };
      }
      case "hang":
        return { fault: "hang" };
      case "crash": {
        const tag = args[0] ?? "x";
        if (!afterTool) return { text: "", toolCalls: [{ name: "ls", args: { path: "/mnt/user-data/workspace" }, id: `call_${tag}` }] };
        if (!hung.has(tag)) {
          hung.add(tag);
          return { fault: "hang" };
        }
        return { text: `resumed ${tag}` };
      }
      case "bench": {
        const delayMs = Number(args[0] ?? 100);
        if (!afterTool) return { text: "", toolCalls: [{ name: "ls", args: { path: "/mnt/user-data/workspace" } }], delayMs };
        return { text: `done: ${human}`, delayMs };
      }
      default:
        return { text: `answer: ${human}` };
    }
  };
  return { step, hung };
}
