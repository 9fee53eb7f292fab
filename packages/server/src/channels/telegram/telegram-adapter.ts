import type { AdapterDeps } from "../adapters";
import type { TelegramConfig } from "../config";
import { ChannelError } from "../errors";
import { markdownToTelegramHtml } from "../markdown";
import type { ChannelAdapter, InboundFile, InboundMessage, InboundSink, OutboundFile, ReplyTarget } from "../types";
import { TelegramBotApi } from "./bot-api";

/** The parts of a Bot API `Message` read here. */
interface TgMessage {
  message_id: number;
  message_thread_id?: number;
  chat: { id: number | string; type?: string };
  from?: { id: number | string; username?: string; first_name?: string };
  text?: string;
  caption?: string;
  document?: { file_id: string; file_name?: string; file_size?: number };
  photo?: Array<{ file_id: string; file_size?: number }>;
}

interface TgUpdate {
  update_id: number;
  message?: TgMessage;
}

/** Seconds one `getUpdates` long poll waits for an update. */
const POLL_TIMEOUT_S = 30;

/**
 * Telegram over the Bot API's long polling (`getUpdates`): no public
 * address needed. The update offset is kept in the channel store, so a
 * restart resumes after the last update it took. Replies are HTML
 * (`parse_mode: "HTML"`), edited in place while they stream.
 */
export class TelegramAdapter implements ChannelAdapter {
  readonly name = "telegram" as const;
  readonly capabilities = { editable: true, maxLength: 4096 };
  private readonly api: TelegramBotApi;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly config: TelegramConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new TelegramBotApi({ apiBaseUrl: config.api_base_url || "https://api.telegram.org", token: config.bot_token, sleep: deps.sleep });
  }

  format(markdown: string): string {
    return markdownToTelegramHtml(markdown);
  }

  async start(sink: InboundSink, onError: (err: unknown) => void): Promise<void> {
    this.abort = new AbortController();
    const signal = this.abort.signal;
    // getMe checks the token before the channel counts as running
    await this.api.call("getMe", {}, signal);
    // a webhook set elsewhere makes getUpdates fail with 409: long polling needs it gone
    await this.api.call("deleteWebhook", { drop_pending_updates: false }, signal).catch(() => undefined);
    this.loop = this.poll(sink, onError, signal);
  }

  private async poll(sink: InboundSink, onError: (err: unknown) => void, signal: AbortSignal): Promise<void> {
    let offset = Number((await this.deps.store.getCursor("telegram", "update_offset")) ?? "0");
    let failures = 0;
    while (!signal.aborted) {
      try {
        const updates = await this.api.call<TgUpdate[]>("getUpdates", { offset: offset || undefined, timeout: POLL_TIMEOUT_S, allowed_updates: ["message"] }, signal);
        failures = 0;
        for (const u of updates) {
          // claimed (stored) before the offset moves past it: a crash in between means a redelivery, which the claim stops
          const message = u.message ? this.inbound(u.message) : undefined;
          if (message) await sink(message);
          offset = u.update_id + 1;
          await this.deps.store.setCursor("telegram", "update_offset", String(offset));
        }
      } catch (err) {
        if (signal.aborted) return;
        onError(err);
        failures++;
        await this.deps.sleep(Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5)), signal).catch(() => undefined);
      }
    }
  }

  private inbound(m: TgMessage): InboundMessage | undefined {
    const files: InboundFile[] = [];
    if (m.document) files.push(this.file(m.document.file_id, m.document.file_name ?? `document-${m.message_id}`, m.document.file_size));
    if (m.photo?.length) {
      const largest = m.photo[m.photo.length - 1]!;
      files.push(this.file(largest.file_id, `photo-${m.message_id}.jpg`, largest.file_size));
    }
    const text = m.text ?? m.caption ?? "";
    if (!text && !files.length) return undefined;
    return {
      channel: "telegram",
      chatId: String(m.chat.id),
      topicId: m.message_thread_id !== undefined ? String(m.message_thread_id) : undefined,
      messageId: `${m.chat.id}:${m.message_id}`,
      userId: String(m.from?.id ?? m.chat.id),
      userName: m.from?.username ?? m.from?.first_name,
      text,
      files,
    };
  }

  private file(fileId: string, name: string, size?: number): InboundFile {
    return {
      name,
      size,
      download: async () => {
        const f = await this.api.call<{ file_path?: string }>("getFile", { file_id: fileId });
        if (!f.file_path) throw new ChannelError("channel_api_error", `Telegram getFile returned no file_path for ${name}`);
        return this.api.download(f.file_path);
      },
    };
  }

  private base(target: ReplyTarget): Record<string, unknown> {
    const out: Record<string, unknown> = { chat_id: target.chatId };
    if (target.topicId) out.message_thread_id = Number(target.topicId);
    return out;
  }

  async sendText(target: ReplyTarget, text: string): Promise<string> {
    const replyTo = target.replyToMessageId?.split(":").pop();
    const params = { ...this.base(target), text, parse_mode: "HTML", ...(replyTo ? { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } } : {}) };
    const sent = await this.withPlainFallback(params, (p) => this.api.call<{ message_id: number }>("sendMessage", p));
    return String(sent.message_id);
  }

  async editText(target: ReplyTarget, messageId: string, text: string): Promise<void> {
    try {
      await this.withPlainFallback({ chat_id: target.chatId, message_id: Number(messageId), text, parse_mode: "HTML" }, (p) => this.api.call("editMessageText", p));
    } catch (err) {
      // the same text again is not an error for a reply
      if (err instanceof ChannelError && /message is not modified/i.test(err.message)) return;
      throw err;
    }
  }

  /** HTML the API cannot parse is sent again as plain text (the reply still arrives). */
  private async withPlainFallback<T>(params: Record<string, unknown>, send: (p: Record<string, unknown>) => Promise<T>): Promise<T> {
    try {
      return await send(params);
    } catch (err) {
      if (!(err instanceof ChannelError) || !/can't parse entities/i.test(err.message)) throw err;
      const { parse_mode: _drop, ...plain } = params;
      return send({ ...plain, text: String(params.text).replace(/<[^>]+>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&") });
    }
  }

  async sendFile(target: ReplyTarget, file: OutboundFile): Promise<void> {
    const form = new FormData();
    for (const [k, v] of Object.entries(this.base(target))) form.set(k, String(v));
    form.set("document", new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mimeType }), file.name);
    await this.api.call("sendDocument", form);
  }

  async stop(): Promise<void> {
    this.abort?.abort(new ChannelError("channel_stopped", "The Telegram channel stopped"));
    await this.loop?.catch(() => undefined);
    this.loop = undefined;
  }
}
