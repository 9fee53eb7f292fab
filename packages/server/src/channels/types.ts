import type { ChannelName } from "./config";

/** A file attached to an inbound message; its bytes are fetched only when the message is handled. */
export interface InboundFile {
  name: string;
  size?: number;
  download(): Promise<Uint8Array>;
}

/** One message a platform delivered, as every adapter presents it. */
export interface InboundMessage {
  channel: ChannelName;
  /** The chat (Telegram chat id, Slack channel, Feishu chat id). */
  chatId: string;
  /** A topic or thread inside the chat (Telegram forum topic, Slack thread ts), if any. */
  topicId?: string;
  /** The platform's id of this message: the idempotency key (unique per channel). */
  messageId: string;
  /** The sender's platform id (what `allowed_users` lists). */
  userId: string;
  userName?: string;
  text: string;
  files: InboundFile[];
}

/** Where a reply goes. */
export interface ReplyTarget {
  chatId: string;
  topicId?: string;
  /** The inbound message replied to (platforms that thread replies use it). */
  replyToMessageId?: string;
}

/** A file sent back to the chat. */
export interface OutboundFile {
  name: string;
  bytes: Uint8Array;
  mimeType: string;
}

/** What a platform allows a reply to be. */
export interface ChannelCapabilities {
  /** A sent message can be edited (replies stream by editing one message). */
  editable: boolean;
  /** The longest text one message may hold (in the platform's own units, after formatting). */
  maxLength: number;
}

/** Receives what an adapter's connection delivers. */
export type InboundSink = (message: InboundMessage) => Promise<void>;

/**
 * One platform connection. `start` connects and keeps delivering messages to
 * the sink until `stop`; it resolves once connected and reports a lost
 * connection through `onError` (the adapter reconnects by itself).
 */
export interface ChannelAdapter {
  readonly name: ChannelName;
  readonly capabilities: ChannelCapabilities;
  start(sink: InboundSink, onError: (err: unknown) => void): Promise<void>;
  stop(): Promise<void>;
  /** Markdown (what the agent writes) in the platform's message format. */
  format(markdown: string): string;
  /** Send a new message (already formatted); resolves with its platform id. */
  sendText(target: ReplyTarget, text: string): Promise<string>;
  /** Replace a sent message's text (only when `capabilities.editable`). */
  editText(target: ReplyTarget, messageId: string, text: string): Promise<void>;
  sendFile(target: ReplyTarget, file: OutboundFile): Promise<void>;
}

/** Waits `ms` (abortable); tests replace it to observe backoff without sleeping. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The default {@link Sleep}: a timer, cleared on abort. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
