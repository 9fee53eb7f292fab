import type { RunHandle, StreamItem } from "@deerflow-ts/harness";
import { splitMarkdown } from "./markdown";
import type { ChannelAdapter, ReplyTarget } from "./types";

/** Text of a message's `content` (a string, or a list of text parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === "string" ? p : p && typeof p === "object" && (p as { type?: unknown }).type === "text" ? String((p as { text?: unknown }).text ?? "") : ""))
      .join("");
  }
  return "";
}

/** The text of the last AI message of a thread's messages that has any. */
export function lastAiText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { type?: unknown; content?: unknown } | null;
    if (m && (m.type === "ai" || m.type === "AIMessageChunk")) {
      const t = contentText(m.content).trim();
      if (t) return t;
    }
  }
  return "";
}

/** The last AI text after the last human message (what the latest turn answered so far), or "". */
export function latestTurnAiText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if ((messages[i] as { type?: unknown } | null)?.type === "human") {
      start = i + 1;
      break;
    }
  }
  return lastAiText(messages.slice(start));
}

/** How a streamed reply is kept: the store learns the reply's message id as soon as it exists. */
export interface ReplyStreamOptions {
  adapter: ChannelAdapter;
  target: ReplyTarget;
  /** The one reply message, when a previous process already sent it. */
  replyMessageId: string | null;
  /** Called once the reply message exists (before anything else is sent). */
  onReplyMessage(messageId: string): Promise<void>;
  /** Least time between two edits while streaming (ms; 0 = every chunk). */
  editIntervalMs: number;
  clock: () => number;
  log: (message: string) => void;
}

/**
 * One reply message per inbound message: created on the first text (or at
 * the end), edited while the run streams, given its final text at the end;
 * a final text over the platform's limit continues in further messages.
 * Platform calls are serialised: at most one is in flight, and a newer text
 * replaces a pending one.
 */
export class ReplyStream {
  private messageId: string | null;
  private shown = "";
  private pending: string | null = null;
  private chain: Promise<void> = Promise.resolve();
  private lastEdit = Number.NEGATIVE_INFINITY;
  private readonly texts = new Map<string, string>();
  private latestId: string | null = null;

  constructor(private readonly o: ReplyStreamOptions) {
    this.messageId = o.replyMessageId;
  }

  /** The reply message's id, once it exists. */
  get replyMessageId(): string | null {
    return this.messageId;
  }

  /** Follow a run's `messages` events until its stream ends. */
  follow(run: Pick<RunHandle, "subscribe">): Promise<void> {
    return new Promise<void>((resolve) => {
      let stop: (() => void) | undefined;
      let ended = false;
      const listener = (item: StreamItem) => {
        if (item.kind !== "event") {
          ended = true;
          stop?.();
          resolve();
          return;
        }
        if (item.event === "messages" && Array.isArray(item.data)) this.onChunk(item.data[0]);
      };
      stop = run.subscribe(null, listener);
      if (ended) stop();
    });
  }

  private onChunk(chunk: unknown): void {
    const c = chunk as { id?: unknown; type?: unknown; content?: unknown } | null;
    if (!c || (c.type !== "AIMessageChunk" && c.type !== "ai")) return;
    const id = typeof c.id === "string" ? c.id : "current";
    const text = (this.texts.get(id) ?? "") + contentText(c.content);
    this.texts.set(id, text);
    if (text.trim()) this.latestId = id;
    const show = this.latestId ? (this.texts.get(this.latestId) ?? "") : "";
    if (!show.trim() || !this.o.adapter.capabilities.editable) return;
    if (this.o.clock() - this.lastEdit < this.o.editIntervalMs) return;
    this.lastEdit = this.o.clock();
    this.push(this.streamingText(show));
  }

  /** While streaming, the text is cut to what one message holds (the final text is split instead). */
  private streamingText(markdown: string): string {
    const formatted = this.o.adapter.format(markdown);
    const limit = this.o.adapter.capabilities.maxLength;
    if (formatted.length <= limit) return formatted;
    return this.o.adapter.format(splitMarkdown(markdown, limit - 2, (s) => this.o.adapter.format(s))[0]! + " …");
  }

  private push(formatted: string): void {
    const idle = this.pending === null;
    this.pending = formatted;
    if (idle) this.chain = this.chain.then(() => this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending !== null) {
      const text = this.pending;
      this.pending = null;
      if (text === this.shown) continue;
      try {
        await this.write(text);
      } catch (err) {
        // a failed edit while streaming is not fatal: the final text is written again at the end
        this.o.log(`[channels] ${this.o.adapter.name}: updating the reply failed: ${(err as Error).message}`);
      }
    }
  }

  private async write(formatted: string): Promise<void> {
    if (this.messageId === null) {
      const id = await this.o.adapter.sendText(this.o.target, formatted);
      this.messageId = id;
      await this.o.onReplyMessage(id);
    } else {
      await this.o.adapter.editText(this.o.target, this.messageId, formatted);
    }
    this.shown = formatted;
  }

  /** The text streamed so far (Markdown), for a reply that ends without a final answer. */
  get streamedMarkdown(): string {
    return this.latestId ? (this.texts.get(this.latestId) ?? "") : "";
  }

  /**
   * Give the reply its final text: the reply message gets the first piece,
   * further pieces are new messages. Throws when the platform refuses.
   */
  async finish(markdown: string): Promise<void> {
    this.pending = null;
    await this.chain;
    const adapter = this.o.adapter;
    const pieces = splitMarkdown(markdown.trim() || "(no reply)", adapter.capabilities.maxLength, (s) => adapter.format(s)).map((p) => adapter.format(p));
    const [first, ...rest] = pieces;
    if (this.messageId === null || !adapter.capabilities.editable) {
      if (this.messageId === null) await this.write(first!);
    } else if (first !== this.shown) {
      await this.write(first!);
    }
    for (const piece of rest) await adapter.sendText(this.o.target, piece);
  }
}
