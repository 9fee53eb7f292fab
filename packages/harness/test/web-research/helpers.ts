import { WEB_CONTENT_BEGIN, WEB_CONTENT_END } from "../../src/text";
import { createRunOutcomeRecorder } from "../../src/runtime/outcome";
import { createRunContext } from "../../src/runtime/run-context";
import type { ToolDefinition, ToolRuntime } from "../../src/tools";

/** A minimal tool runtime for calling a tool directly. */
export function toolRuntime(signal: AbortSignal = new AbortController().signal): ToolRuntime {
  return {
    state: { messages: [] } as unknown as ToolRuntime["state"],
    context: createRunContext({ threadId: "t", runId: "r", context: { user_id: "u" } }),
    toolCallId: "call-1",
    signal,
    outcome: createRunOutcomeRecorder(),
    writer: () => undefined,
    emit: () => undefined,
    namespace: [],
    runChild: () => Promise.reject(new Error("runChild not expected")),
    interrupt: () => {
      throw new Error("interrupt not expected");
    },
  };
}

/** Validate args with the tool's schema, run it, and return its text and status. */
export async function callTool(def: ToolDefinition, args: unknown): Promise<{ text: string; status: "success" | "error" }> {
  const parsed = def.schema.parse(args);
  const r = await def.execute(parsed, toolRuntime());
  if (typeof r === "string") return { text: r, status: "success" };
  if (r && typeof r === "object" && "content" in r && typeof r.content === "string") return { text: r.content, status: (r as { status?: "error" }).status === "error" ? "error" : "success" };
  throw new Error(`unexpected tool result: ${JSON.stringify(r)}`);
}

/** The text inside the untrusted-web-content frame (fails when the frame is missing). */
export function unframe(text: string): string {
  if (!text.startsWith(`${WEB_CONTENT_BEGIN}\n`) || !text.endsWith(`\n${WEB_CONTENT_END}`)) throw new Error(`not framed: ${text.slice(0, 200)}`);
  return text.slice(WEB_CONTENT_BEGIN.length + 1, text.length - WEB_CONTENT_END.length - 1);
}

/** Parse a framed JSON tool output. */
export function framedJson<T = unknown>(text: string): T {
  return JSON.parse(unframe(text)) as T;
}
