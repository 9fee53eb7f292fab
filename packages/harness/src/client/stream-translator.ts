import { contentText } from "../messages";
import type { AIMessage, AIMessageChunk, Message, ToolMessage, UsageMetadata } from "../messages";
import type { StreamEvent } from "../runtime";
import type { ClientStreamEvent, ClientUsage } from "./types";

function serializeToolCalls(calls: AIMessage["tool_calls"]): Array<{ name: string; args: unknown; id: string | undefined }> {
  return calls.map((c) => ({ name: c.name, args: c.args, id: c.id }));
}

/** A message as the client reports it in `values` (compact, JSON-safe). */
export function serializeClientMessage(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = { type: m.type, content: m.type === "tool" ? contentText(m.content) : m.content, id: m.id ?? null };
  if (m.type === "ai") {
    if (m.tool_calls.length) out.tool_calls = serializeToolCalls(m.tool_calls);
    if (m.usage_metadata) out.usage_metadata = m.usage_metadata;
  }
  if (m.type === "tool") {
    out.name = m.name ?? null;
    out.tool_call_id = m.tool_call_id;
    out.status = m.status ?? "success";
    if (m.artifact !== undefined && m.artifact !== null) out.artifact = m.artifact;
  }
  if (m.additional_kwargs && Object.keys(m.additional_kwargs).length) out.additional_kwargs = { ...m.additional_kwargs };
  return out;
}

function toolResultEvent(m: ToolMessage): ClientStreamEvent {
  const data: Record<string, unknown> = {
    type: "tool",
    content: contentText(m.content),
    name: m.name ?? null,
    tool_call_id: m.tool_call_id,
    id: m.id ?? null,
    status: m.status ?? "success",
  };
  if (m.artifact !== undefined && m.artifact !== null) data.artifact = m.artifact;
  return { type: "messages-tuple", data };
}

/**
 * Turns the agent's raw stream (`values`, `messages`, `custom`) into the
 * embedded client's events: AI text as deltas with a stable id, each tool
 * call and each tool result exactly once, and usage counted once per message
 * id. Messages that existed before the run (`historicalIds`) are never
 * re-emitted or counted.
 */
export class ClientStreamTranslator {
  private readonly sentText = new Map<string, string>();
  private readonly sentToolCalls = new Set<string>();
  private readonly pendingToolCalls = new Set<string>();
  private readonly sentToolResults = new Set<string>();
  private readonly countedUsage = new Set<string>();
  readonly usage: ClientUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  /** The last `values` snapshot seen. */
  lastValues: Record<string, unknown> | undefined;

  constructor(private readonly historicalIds: ReadonlySet<string> = new Set()) {}

  private account(id: string | undefined, usage: UsageMetadata | null | undefined): UsageMetadata | undefined {
    if (!usage) return undefined;
    if (id) {
      if (this.countedUsage.has(id)) return undefined;
      this.countedUsage.add(id);
    }
    this.usage.input_tokens += usage.input_tokens ?? 0;
    this.usage.output_tokens += usage.output_tokens ?? 0;
    this.usage.total_tokens += usage.total_tokens ?? (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
    return usage;
  }

  private textEvent(id: string, text: string, usage?: UsageMetadata): ClientStreamEvent {
    const data: Record<string, unknown> = { type: "ai", content: text, id };
    if (usage) data.usage_metadata = usage;
    return { type: "messages-tuple", data };
  }

  private toolCallsEvent(m: AIMessage): ClientStreamEvent {
    this.sentToolCalls.add(m.id!);
    this.pendingToolCalls.delete(m.id!);
    return { type: "messages-tuple", data: { type: "ai", content: "", id: m.id, tool_calls: serializeToolCalls(m.tool_calls) } };
  }

  /** Events for a complete AI message (from `values` or a non-streamed `messages` frame). */
  private completeAI(m: AIMessage): ClientStreamEvent[] {
    const out: ClientStreamEvent[] = [];
    const id = m.id;
    if (!id || this.historicalIds.has(id)) return out;
    const text = contentText(m.content);
    const sent = this.sentText.get(id) ?? "";
    const usage = this.account(id, m.usage_metadata);
    if (text && text !== sent && text.startsWith(sent)) {
      out.push(this.textEvent(id, text.slice(sent.length), usage));
      this.sentText.set(id, text);
    } else if (usage) {
      out.push(this.textEvent(id, "", usage));
    }
    if (m.tool_calls.length && !this.sentToolCalls.has(id)) out.push(this.toolCallsEvent(m));
    return out;
  }

  private toolResult(m: ToolMessage): ClientStreamEvent[] {
    const id = m.id ?? `tool:${m.tool_call_id}`;
    if (this.historicalIds.has(id) || this.sentToolResults.has(id)) return [];
    this.sentToolResults.add(id);
    return [toolResultEvent(m)];
  }

  private chunk(c: AIMessageChunk): ClientStreamEvent[] {
    if (!c.id || this.historicalIds.has(c.id)) return [];
    const out: ClientStreamEvent[] = [];
    const delta = contentText(c.content);
    const usage = this.account(c.id, c.usage_metadata);
    if (delta) {
      this.sentText.set(c.id, (this.sentText.get(c.id) ?? "") + delta);
      out.push(this.textEvent(c.id, delta, usage));
    } else if (usage) {
      out.push(this.textEvent(c.id, "", usage));
    }
    // Tool-call arguments arrive as fragments; the tool_calls event is sent once the message is complete.
    if (c.tool_call_chunks?.length && !this.sentToolCalls.has(c.id)) this.pendingToolCalls.add(c.id);
    return out;
  }

  /** Translate one raw agent event (nested sub-agent events are skipped). */
  translate(event: StreamEvent): ClientStreamEvent[] {
    if (event.ns.length) return [];
    if (event.mode === "custom") return [{ type: "custom", data: event.data }];
    if (event.mode === "messages") {
      const [msg] = event.data as [Record<string, unknown>, unknown];
      if (!msg || typeof msg !== "object") return [];
      if (msg.type === "AIMessageChunk") return this.chunk(msg as unknown as AIMessageChunk);
      if (msg.type === "tool") return this.toolResult(msg as unknown as ToolMessage);
      if (msg.type === "ai") return this.completeAI(msg as unknown as AIMessage);
      return [];
    }
    if (event.mode === "values") {
      const values = (event.data ?? {}) as Record<string, unknown>;
      this.lastValues = values;
      const messages = Array.isArray(values.messages) ? (values.messages as Message[]) : [];
      const out: ClientStreamEvent[] = [];
      for (const m of messages) {
        if (m.type === "ai") out.push(...this.completeAI(m));
        else if (m.type === "tool") out.push(...this.toolResult(m));
      }
      const { messages: _m, title, artifacts, ...rest } = values;
      out.push({
        type: "values",
        data: {
          ...rest,
          title: typeof title === "string" ? title : null,
          messages: messages.map(serializeClientMessage),
          artifacts: Array.isArray(artifacts) ? (artifacts as string[]) : [],
        },
      });
      return out;
    }
    return [];
  }

  /** Final AI text of the turn, as `chat()` returns it: the text of the last AI message with text. */
  finalText(): string {
    const messages = Array.isArray(this.lastValues?.messages) ? (this.lastValues!.messages as Message[]) : [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m.type === "human" && !(m.id && this.historicalIds.has(m.id))) break;
      if (m.type === "ai" && !(m.id && this.historicalIds.has(m.id))) {
        const t = contentText(m.content);
        if (t) return t;
      }
    }
    return "";
  }
}
