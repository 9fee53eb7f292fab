import { ChannelError } from "../errors";
import type { Sleep } from "../types";

/** Bot API's answer envelope. */
interface BotApiAnswer<T> {
  ok: boolean;
  result?: T;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** Options of {@link TelegramBotApi}. */
export interface TelegramBotApiOptions {
  /** The Bot API root (`https://api.telegram.org`): methods at `{root}/bot{token}/{method}`. */
  apiBaseUrl: string;
  token: string;
  sleep: Sleep;
  /** Retries of one call answered 429 (default 5). */
  maxRetries?: number;
}

/**
 * A Telegram Bot API client: JSON or multipart calls, 429 answers waited out
 * for the `retry_after` the API gives (never sooner), errors as
 * {@link ChannelError} with the API's description. The token is part of
 * every URL, so no URL is ever put in an error or a log line.
 */
export class TelegramBotApi {
  private readonly root: string;

  constructor(private readonly o: TelegramBotApiOptions) {
    this.root = o.apiBaseUrl.replace(/\/+$/, "");
  }

  /** Call a method with a JSON body (or a multipart form). */
  async call<T>(method: string, params: Record<string, unknown> | FormData, signal?: AbortSignal): Promise<T> {
    const maxRetries = this.o.maxRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res =
          params instanceof FormData
            ? await fetch(`${this.root}/bot${this.o.token}/${method}`, { method: "POST", body: params, signal })
            : await fetch(`${this.root}/bot${this.o.token}/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(params), signal });
      } catch (err) {
        if (signal?.aborted) throw err;
        throw new ChannelError("channel_api_error", `Telegram ${method} could not reach the Bot API: ${(err as Error).message}`, { cause: err });
      }
      const body = (await res.json().catch(() => ({ ok: false, description: `HTTP ${res.status}` }))) as BotApiAnswer<T>;
      if (body.ok) return body.result as T;
      const code = body.error_code ?? res.status;
      if (code === 429 && attempt < maxRetries) {
        const seconds = Math.max(1, body.parameters?.retry_after ?? 1);
        await this.o.sleep(seconds * 1000, signal);
        continue;
      }
      throw new ChannelError(code === 429 ? "channel_rate_limited" : "channel_api_error", `Telegram ${method} failed: ${code} ${body.description ?? ""}`.trim(), { status: code });
    }
  }

  /** Download a file by its `file_path` (from `getFile`). */
  async download(filePath: string): Promise<Uint8Array> {
    const res = await fetch(`${this.root}/file/bot${this.o.token}/${filePath.split("/").map(encodeURIComponent).join("/")}`);
    if (!res.ok) throw new ChannelError("channel_api_error", `Telegram file download failed: HTTP ${res.status}`, { status: res.status });
    return new Uint8Array(await res.arrayBuffer());
  }
}
