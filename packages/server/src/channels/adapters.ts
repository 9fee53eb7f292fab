import type { ChannelStore } from "./channel-store";
import type { ChannelName, ChannelsSection, TelegramConfig } from "./config";
import { ChannelError } from "./errors";
import type { ChannelAdapter, Sleep } from "./types";

/** What an adapter gets besides its config section. */
export interface AdapterDeps {
  sleep: Sleep;
  log: (message: string) => void;
  /** Durable per-channel cursors (Telegram's update offset). */
  store: ChannelStore;
}

/**
 * Build a channel's adapter. Each platform's module is imported only when
 * that channel is enabled, so an idle server loads none of them.
 */
export async function createAdapter(name: ChannelName, section: ChannelsSection, deps: AdapterDeps): Promise<ChannelAdapter> {
  switch (name) {
    case "telegram": {
      const { TelegramAdapter } = await import("./telegram/telegram-adapter");
      return new TelegramAdapter(section.telegram as TelegramConfig, deps);
    }
    case "slack":
    case "feishu":
      throw new ChannelError("channel_config_invalid", `channels.${name}: this server does not connect to ${name} yet`);
  }
}
