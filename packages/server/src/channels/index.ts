/**
 * IM channels (app layer): Telegram long polling, Slack Socket Mode and
 * Feishu/Lark long connection, each inbound message claimed once in the
 * store and answered by one run with one streamed reply.
 */
export { ChannelManager } from "./channel-manager";
export type { ChannelManagerOptions, ChannelStatus } from "./channel-manager";
export { ChannelStore, CHANNEL_MIGRATIONS } from "./channel-store";
export type { ChannelConnectionRecord, ChatThread, DeliveryRecord, DeliveryStatus } from "./channel-store";
export { ChannelsHost } from "./channels-host";
export type { ChannelHostOptions } from "./channels-host";
export { registerChannelRoutes, CONNECT_CODE_TTL_SECONDS } from "./channel-routes";
export { registerLarkIntegrationRoutes } from "./lark-routes";
export { CHANNEL_NAMES, readChannelConnections, readChannelsSection } from "./config";
export type { ChannelConnectionsSection, ChannelName, ChannelsSection, FeishuConfig, SlackConfig, TelegramConfig } from "./config";
export { ChannelError } from "./errors";
export type { ChannelErrorCode } from "./errors";
export { CHANNEL_COMMANDS, parseCommand } from "./commands";
export { markdownToSlackMrkdwn, markdownToTelegramHtml, splitMarkdown } from "./markdown";
export type { ChannelAdapter, ChannelCapabilities, InboundFile, InboundMessage, OutboundFile, ReplyTarget, Sleep } from "./types";
