import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Recorder, sendJson, startHttpDouble } from "./http-double";

/** A Bot API call the double answered (or refused). */
export interface TelegramCall {
  method: string;
  /** JSON params, or the form's text fields (a file field is `{ filename, size, text }`). */
  params: Record<string, unknown>;
}

/** A message the bot sent, with its edit history. */
export interface TelegramBotMessage {
  chatId: string;
  messageId: number;
  /** Texts in order: the sent one first, then every edit. */
  texts: string[];
  parseMode?: string;
}

/** A file the bot sent with `sendDocument`. */
export interface TelegramSentDocument {
  chatId: string;
  filename: string;
  bytes: Buffer;
}

/** What a test user sends. */
export interface TelegramUserMessage {
  chatId: number;
  text?: string;
  from?: { id: number; username?: string };
  /** A file attached as a document. */
  document?: { filename: string; bytes: Buffer };
  messageThreadId?: number;
}

/** A fault for the next calls of a method. */
export interface TelegramFault {
  method: string;
  /** 429 with `parameters.retry_after` (seconds), or another error code. */
  errorCode: number;
  retryAfter?: number;
  description?: string;
  /** How many calls fail (default 1). */
  times?: number;
}

/** A running Telegram Bot API double. */
export interface TelegramDouble {
  /** Use as `channels.telegram.api_base_url`. */
  url: string;
  token: string;
  calls: Recorder<TelegramCall>;
  /** Messages the bot sent, by `chatId:messageId`. */
  botMessages: Map<string, TelegramBotMessage>;
  documents: TelegramSentDocument[];
  /** Queue a user's message as a new update; returns its update. */
  sendUserMessage(message: TelegramUserMessage): Record<string, unknown>;
  /** Deliver an update again, as Telegram does when its receipt was not confirmed. */
  redeliver(update: Record<string, unknown>): void;
  /** Fail the next call(s) of a method. */
  fail(fault: TelegramFault): void;
  /** Bot messages of a chat, oldest first. */
  messagesIn(chatId: number | string): TelegramBotMessage[];
  close(): Promise<void>;
}

const DOUBLE_DEFAULT_TOKEN = "123456:TEST-TOKEN";

/**
 * Start a local Telegram Bot API double on 127.0.0.1: `getMe`,
 * `deleteWebhook`, `getUpdates` (long polling: held until an update comes
 * or `timeout` seconds pass; `offset` confirms earlier updates),
 * `sendMessage`, `editMessageText` (refuses an unchanged text with "message
 * is not modified", as Telegram does), `sendDocument` (multipart),
 * `getFile` and file downloads at `/file/bot{token}/{file_path}`. Any
 * method can be made to fail (a 429 carries `parameters.retry_after`).
 */
export async function startTelegramDouble(options: { token?: string } = {}): Promise<TelegramDouble> {
  const token = options.token ?? DOUBLE_DEFAULT_TOKEN;
  const calls = new Recorder<TelegramCall>();
  const botMessages = new Map<string, TelegramBotMessage>();
  const documents: TelegramSentDocument[] = [];
  const files = new Map<string, { path: string; bytes: Buffer }>();
  const updates: Array<Record<string, unknown>> = [];
  const redeliveries: Array<Record<string, unknown>> = [];
  const pollers = new Set<() => void>();
  const faults: TelegramFault[] = [];
  let nextUpdateId = 1000;
  let nextUserMessageId = 1;
  const nextBotMessageId = new Map<string, number>();
  let confirmed = 0;

  const wake = () => {
    for (const p of [...pollers]) p();
  };

  const ok = (res: ServerResponse, result: unknown) => sendJson(res, 200, { ok: true, result });
  const err = (res: ServerResponse, code: number, description: string, parameters?: Record<string, unknown>) =>
    sendJson(res, code === 429 ? 429 : code >= 500 ? code : 400, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });

  const readParams = async (req: Request): Promise<Record<string, unknown>> => {
    const type = req.headers.get("content-type") ?? "";
    if (type.startsWith("multipart/form-data")) {
      const form = await req.formData();
      const out: Record<string, unknown> = {};
      for (const [k, v] of form.entries()) {
        if (typeof v === "string") out[k] = v;
        else {
          const bytes = Buffer.from(await v.arrayBuffer());
          out[k] = { filename: v.name, size: bytes.length, bytes };
        }
      }
      return out;
    }
    if (type.includes("json")) return (await req.json()) as Record<string, unknown>;
    return Object.fromEntries(new URL(req.url).searchParams);
  };

  const http = await startHttpDouble(async (req, res) => {
    const url = new URL(req.url);
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileMatch) {
      const file = [...files.values()].find((f) => f.path === decodeURIComponent(fileMatch[2]!));
      if (fileMatch[1] !== token || !file) return sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(file.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!m) return sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    if (m[1] !== token) return err(res, 401, "Unauthorized");
    const method = m[2]!;
    const params = await readParams(req);
    const recorded = { ...params };
    for (const [k, v] of Object.entries(recorded)) {
      if (v && typeof v === "object" && "bytes" in v) {
        const file = v as unknown as { filename: string; size: number };
        recorded[k] = { filename: file.filename, size: file.size };
      }
    }
    calls.add({ method, params: recorded });
    const fault = faults.find((f) => f.method === method);
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
      return err(res, fault.errorCode, fault.description ?? (fault.errorCode === 429 ? `Too Many Requests: retry after ${fault.retryAfter ?? 1}` : "Bad Request"), fault.errorCode === 429 ? { retry_after: fault.retryAfter ?? 1 } : undefined);
    }
    switch (method) {
      case "getMe":
        return ok(res, { id: 42, is_bot: true, first_name: "DeerFlow", username: "deerflow_test_bot" });
      case "deleteWebhook":
        return ok(res, true);
      case "getUpdates": {
        const offset = Number(params.offset ?? 0);
        if (offset > confirmed) confirmed = offset;
        // an update is returned until a later offset confirms it, as on Telegram; a redelivery comes once more
        const answer = () => [...redeliveries.splice(0), ...updates.filter((u) => (u.update_id as number) >= confirmed)];
        const now = answer();
        if (now.length || !Number(params.timeout)) return ok(res, now);
        await new Promise<void>((resolve) => {
          const done = () => {
            pollers.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, Number(params.timeout) * 1000);
          pollers.add(done);
          res.on("close", done);
        });
        return ok(res, answer());
      }
      case "sendMessage": {
        const chatId = String(params.chat_id);
        const id = (nextBotMessageId.get(chatId) ?? 5000) + 1;
        nextBotMessageId.set(chatId, id);
        botMessages.set(`${chatId}:${id}`, { chatId, messageId: id, texts: [String(params.text)], parseMode: params.parse_mode as string | undefined });
        return ok(res, { message_id: id, chat: { id: Number(chatId) }, date: Math.floor(Date.now() / 1000), text: params.text });
      }
      case "editMessageText": {
        const msg = botMessages.get(`${String(params.chat_id)}:${String(params.message_id)}`);
        if (!msg) return err(res, 400, "Bad Request: message to edit not found");
        if (msg.texts[msg.texts.length - 1] === params.text) return err(res, 400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message");
        msg.texts.push(String(params.text));
        return ok(res, { message_id: msg.messageId, chat: { id: Number(msg.chatId) }, text: params.text });
      }
      case "sendDocument": {
        const doc = params.document as { filename: string; bytes: Buffer } | undefined;
        if (!doc || typeof doc !== "object") return err(res, 400, "Bad Request: there is no document in the request");
        documents.push({ chatId: String(params.chat_id), filename: doc.filename, bytes: doc.bytes });
        return ok(res, { message_id: 9000 + documents.length, document: { file_name: doc.filename } });
      }
      case "getFile": {
        const f = files.get(String(params.file_id));
        if (!f) return err(res, 400, "Bad Request: invalid file_id");
        return ok(res, { file_id: params.file_id, file_size: f.bytes.length, file_path: f.path });
      }
      default:
        return err(res, 404, `Not Found: method ${method} is not part of this double`);
    }
  });

  const sendUserMessage = (message: TelegramUserMessage): Record<string, unknown> => {
    const tg: Record<string, unknown> = {
      message_id: nextUserMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: message.chatId, type: "private" },
      from: { id: message.from?.id ?? message.chatId, is_bot: false, first_name: "Test", username: message.from?.username },
    };
    if (message.messageThreadId !== undefined) tg.message_thread_id = message.messageThreadId;
    if (message.text !== undefined) tg[message.document ? "caption" : "text"] = message.text;
    if (message.document) {
      const fileId = `file-${randomBytes(6).toString("hex")}`;
      files.set(fileId, { path: `documents/${fileId}-${message.document.filename}`, bytes: message.document.bytes });
      tg.document = { file_id: fileId, file_name: message.document.filename, file_size: message.document.bytes.length };
    }
    const update = { update_id: nextUpdateId++, message: tg };
    updates.push(update);
    wake();
    return update;
  };

  return {
    url: http.url,
    token,
    calls,
    botMessages,
    documents,
    sendUserMessage,
    redeliver(update) {
      redeliveries.push(update);
      wake();
    },
    fail(fault) {
      faults.push({ ...fault });
    },
    messagesIn(chatId) {
      return [...botMessages.values()].filter((m) => m.chatId === String(chatId)).sort((a, b) => a.messageId - b.messageId);
    },
    async close() {
      wake();
      await http.close();
    },
  };
}
