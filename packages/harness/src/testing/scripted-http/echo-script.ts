import type { HttpScriptStep, RecordedLLMRequest } from "./script";

interface WireTool {
  name: string;
  required: string[];
  properties: Record<string, { type?: string }>;
}

function toolsOf(body: Record<string, unknown>): WireTool[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  return tools.map((t) => {
    // OpenAI {type:function, function:{name, parameters}}; Anthropic {name, input_schema}.
    const fn = (t.function ?? t) as Record<string, unknown>;
    const schema = (fn.parameters ?? fn.input_schema ?? {}) as { required?: string[]; properties?: Record<string, { type?: string }> };
    return { name: String(fn.name), required: schema.required ?? [], properties: schema.properties ?? {} };
  });
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (b && typeof b === "object" && typeof (b as { text?: unknown }).text === "string" ? (b as { text: string }).text : ""))
      .join("");
  }
  return "";
}

interface LastTurn {
  role: string;
  text: string;
  toolResult?: string;
}

function lastTurn(body: Record<string, unknown>): LastTurn {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const last = messages[messages.length - 1];
  if (!last) return { role: "user", text: "" };
  if (last.role === "tool") return { role: "tool", text: "", toolResult: textOf(last.content) };
  if (last.role === "user" && Array.isArray(last.content)) {
    const result = (last.content as Record<string, unknown>[]).find((b) => b.type === "tool_result");
    if (result) return { role: "tool", text: "", toolResult: textOf(result.content) };
  }
  return { role: String(last.role), text: stripInputBoundary(textOf(last.content)) };
}

/** Drop the `--- BEGIN/END USER INPUT ---` markers the InputSanitization middleware wraps user text in. */
function stripInputBoundary(text: string): string {
  return text.replace(/^--- BEGIN USER INPUT ---\n?/m, "").replace(/\n?--- END USER INPUT ---\s*$/m, "").trim();
}

const CALL = /\b(?:call|use|run)\s+(?:the\s+)?(?:tool\s+)?`?([A-Za-z0-9_.-]+)`?(?:\s+with\s+([\s\S]*))?$/i;

/**
 * The default script of the CLI server: a friendly echo model. It answers
 * "You said: …", calls a tool when asked ("use the tool bash with {"command": "ls"}"
 * or "call web_search with deer migration"), and summarises tool results.
 * It is a test double so people can try the product without an API key.
 */
export function echoStep(request: RecordedLLMRequest): HttpScriptStep {
  const body = request.body ?? {};
  const turn = lastTurn(body);
  if (turn.role === "tool") {
    const result = (turn.toolResult ?? "").trim();
    return `The tool returned: ${result.length > 500 ? `${result.slice(0, 500)}…` : result}`;
  }
  const match = CALL.exec(turn.text.trim());
  if (match) {
    const tool = toolsOf(body).find((t) => t.name === match[1]);
    if (tool) {
      const rest = (match[2] ?? "").trim();
      let args: Record<string, unknown> = {};
      try {
        const parsed = rest.startsWith("{") ? JSON.parse(rest) : null;
        if (parsed && typeof parsed === "object") args = parsed as Record<string, unknown>;
      } catch {
        args = {};
      }
      for (const key of tool.required) {
        if (args[key] === undefined) args[key] = key === "description" ? `Requested by the user: ${rest || tool.name}` : rest;
      }
      return { text: `Calling ${tool.name}.`, toolCalls: [{ name: tool.name, args }] };
    }
  }
  return `You said: ${turn.text}`;
}
