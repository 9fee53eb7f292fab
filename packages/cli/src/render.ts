import type { ClientStreamEvent, ClientUsage } from "@deerflow-ts/harness/client";
import type { Terminal } from "./io";

function summarizeArgs(args: unknown, max = 80): string {
  if (!args || typeof args !== "object") return "";
  const entries = Object.entries(args as Record<string, unknown>).filter(([k]) => k !== "description");
  const text = entries
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v) : JSON.stringify(v)}`)
    .join(", ");
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function firstLine(text: string, max = 100): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * Renders a turn in a terminal: AI text token by token, each tool call as a
 * compact progress line with a spinner while it runs (TTY only), tool results
 * as one line, clarification questions in full. Keeps what the summary needs.
 */
export class TurnRenderer {
  private readonly texts = new Map<string, string>();
  private lastTextId: string | undefined;
  private midLine = false;
  private readonly pending = new Map<string, string>();
  /** Sub-agent descriptions by task id (from `task_started`). */
  private readonly subagents = new Map<string, string>();
  artifacts: string[] = [];
  usage: ClientUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  clarification: string | undefined;

  constructor(private readonly term: Terminal) {}

  private breakLine(): void {
    if (this.midLine) {
      this.term.write("\n");
      this.midLine = false;
    }
  }

  /** Final answer text: the last AI message with text. */
  get finalText(): string {
    if (this.clarification !== undefined) return this.clarification;
    return this.lastTextId ? (this.texts.get(this.lastTextId) ?? "") : "";
  }

  handle(ev: ClientStreamEvent): void {
    if (ev.type === "values") {
      this.artifacts = ev.data.artifacts;
      return;
    }
    if (ev.type === "end") {
      this.usage = ev.data.usage;
      this.breakLine();
      return;
    }
    if (ev.type === "custom") {
      this.subagentProgress(ev.data);
      return;
    }
    const d = ev.data as Record<string, any>;
    if (d.type === "ai") {
      if (typeof d.content === "string" && d.content) {
        this.term.stopSpinner();
        if (this.lastTextId !== d.id) {
          this.breakLine();
          this.lastTextId = d.id;
        }
        this.texts.set(d.id, (this.texts.get(d.id) ?? "") + d.content);
        this.clarification = undefined;
        this.term.write(d.content);
        this.midLine = !d.content.endsWith("\n");
      }
      for (const call of (d.tool_calls as Array<{ id?: string; name: string; args: unknown }> | undefined) ?? []) {
        if (call.name === "ask_clarification") continue;
        this.breakLine();
        this.term.line(this.term.style("gray", `  → ${call.name}(${summarizeArgs(call.args)})`));
        if (call.id) this.pending.set(call.id, call.name);
        this.term.startSpinner(`running ${call.name}…`);
      }
      return;
    }
    if (d.type === "tool") {
      this.pending.delete(d.tool_call_id);
      this.term.stopSpinner();
      this.breakLine();
      const content = typeof d.content === "string" ? d.content : JSON.stringify(d.content);
      if (d.name === "ask_clarification") {
        this.clarification = content;
        this.term.line(this.term.style("yellow", `? ${content}`));
        return;
      }
      const ok = d.status !== "error";
      const mark = ok ? this.term.style("green", "✓") : this.term.style("red", "✗");
      this.term.line(this.term.style("gray", `  ${mark} ${d.name ?? "tool"}: ${firstLine(content) || "(no output)"}`));
      if (this.pending.size) this.term.startSpinner(`running ${[...this.pending.values()].join(", ")}…`);
    }
  }

  /**
   * Sub-agent progress from the `task_*` custom events, as lines nested under
   * the `task` call: start (description, model), each step (its text and the
   * tools it called), and the terminal status with the sub-agent's tokens.
   */
  private subagentProgress(data: unknown): void {
    if (!data || typeof data !== "object") return;
    const d = data as Record<string, any>;
    if (typeof d.type !== "string" || !d.type.startsWith("task_") || typeof d.task_id !== "string") return;
    const label = this.subagents.get(d.task_id) ?? d.task_id;
    const tokens = d.usage && typeof d.usage.total_tokens === "number" ? ` · ${d.usage.total_tokens} tokens` : "";
    let text: string | undefined;
    if (d.type === "task_started") {
      const description = typeof d.description === "string" && d.description ? d.description : d.task_id;
      this.subagents.set(d.task_id, description);
      text = this.term.style("cyan", `    ⇢ sub-agent "${description}" started${d.model_name ? ` (${d.model_name})` : ""}`);
    } else if (d.type === "task_running") {
      const msg = (d.message ?? {}) as { content?: unknown; tool_calls?: Array<{ name: string; args?: unknown }> };
      const said = typeof msg.content === "string" ? firstLine(msg.content, 80) : "";
      const calls = (msg.tool_calls ?? []).map((c) => `${c.name}(${summarizeArgs(c.args, 40)})`).join(", ");
      const what = [said, calls && `→ ${calls}`].filter(Boolean).join(" ");
      text = this.term.style("gray", `    │ ${label} #${d.message_index ?? "?"}: ${what || "(thinking)"}`);
    } else if (d.type === "task_completed") {
      text = this.term.style("gray", `    ${this.term.style("green", "✓")} ${label}: completed${tokens}`);
    } else if (d.type === "task_failed" || d.type === "task_cancelled" || d.type === "task_timed_out") {
      const status = d.type.slice("task_".length).replace("_", " ");
      text = this.term.style("gray", `    ${this.term.style("red", "✗")} ${label}: ${status}${d.error ? ` — ${firstLine(String(d.error), 80)}` : ""}${tokens}`);
    }
    if (!text) return;
    this.term.stopSpinner();
    this.breakLine();
    this.term.line(text);
    if (this.pending.size) this.term.startSpinner(`running ${[...this.pending.values()].join(", ")}…`);
  }

  /** Stop the spinner and end the current line. */
  finish(): void {
    this.term.stopSpinner();
    this.breakLine();
  }
}

/**
 * The token line of a turn: the run record's total (what the gateway's
 * token-usage route reports), its input/output split, and the split by caller
 * (lead agent, sub-agents, middleware) when the client reported one.
 */
export function usageSummary(usage: ClientUsage): string {
  const parts = [`${usage.total_tokens} (${usage.input_tokens} in / ${usage.output_tokens} out)`];
  const by = usage.by_caller;
  if (by) parts.push(`lead ${by.lead_agent} · sub-agents ${by.subagent} · middleware ${by.middleware}`);
  return parts.join(" · ");
}
