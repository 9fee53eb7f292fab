import { z } from "zod";
import { ChannelError } from "./errors";

/** The platforms this server connects to. */
export const CHANNEL_NAMES = ["telegram", "slack", "feishu"] as const;

/** One of {@link CHANNEL_NAMES}. */
export type ChannelName = (typeof CHANNEL_NAMES)[number];

/** `allowed_users`: a list, or one id as a string (DeerFlow accepts both); empty = everyone. */
const allowedUsers = z
  .union([z.string(), z.number(), z.array(z.union([z.string(), z.number()]))])
  .nullish()
  .transform((v) => (v === null || v === undefined ? [] : (Array.isArray(v) ? v : [v]).map(String).filter((s) => s.trim() !== "")));

const optionalText = z.string().nullish().transform((v) => (v ?? "").trim());

/** Keys every channel has (DeerFlow's), plus `api_base_url` (ours: where its API is, tests point it at a double). */
const channelBase = {
  enabled: z.boolean().nullish().transform((v) => v === true),
  allowed_users: allowedUsers,
  api_base_url: optionalText,
};

/** `channels.telegram`. */
export const telegramConfigSchema = z.looseObject({
  ...channelBase,
  bot_token: optionalText,
  bot_username: optionalText,
  rich_messages: z.boolean().nullish(),
});

/** `channels.slack`. */
export const slackConfigSchema = z.looseObject({ ...channelBase, bot_token: optionalText, app_token: optionalText });

/** `channels.feishu` (`domain` is its API root, as DeerFlow reads it). */
export const feishuConfigSchema = z.looseObject({ ...channelBase, app_id: optionalText, app_secret: optionalText, domain: optionalText });

const positiveInt = (fallback: number) => z.number().int().positive().nullish().transform((v) => v ?? fallback);

/** The `channels:` section; other platforms DeerFlow knows (discord, wechat …) are kept unread. */
export const channelsSectionSchema = z.looseObject({
  inbound_queue_maxsize: positiveInt(1000),
  max_concurrency: positiveInt(5),
  shutdown_grace_period_seconds: z.number().nonnegative().nullish().transform((v) => v ?? 3),
  session: z.looseObject({ assistant_id: z.string().nullish(), context: z.record(z.string(), z.unknown()).nullish() }).nullish(),
  telegram: telegramConfigSchema.nullish(),
  slack: slackConfigSchema.nullish(),
  feishu: feishuConfigSchema.nullish(),
});

/** The `channel_connections:` section (per-user bindings). */
export const channelConnectionsSchema = z.looseObject({
  enabled: z.boolean().nullish().transform((v) => v === true),
  require_bound_identity: z.boolean().nullish().transform((v) => v !== false),
  telegram: z.looseObject({ enabled: z.boolean().nullish(), bot_username: z.string().nullish() }).nullish(),
  slack: z.looseObject({ enabled: z.boolean().nullish() }).nullish(),
  feishu: z.looseObject({ enabled: z.boolean().nullish() }).nullish(),
});

/** A validated `channels:` section. */
export type ChannelsSection = z.output<typeof channelsSectionSchema>;
/** `channels.telegram` validated. */
export type TelegramConfig = z.output<typeof telegramConfigSchema>;
/** `channels.slack` validated. */
export type SlackConfig = z.output<typeof slackConfigSchema>;
/** `channels.feishu` validated. */
export type FeishuConfig = z.output<typeof feishuConfigSchema>;
/** A validated `channel_connections:` section. */
export type ChannelConnectionsSection = z.output<typeof channelConnectionsSchema>;

function parseWith<T extends z.ZodType>(schema: T, value: unknown, key: string): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = [key, ...issue.path.map(String)].join(".");
  throw new ChannelError("channel_config_invalid", `config.yaml ${where}: ${issue.message}`);
}

/** Validate `channels:` (absent or null = no channel). Throws a {@link ChannelError} naming the key. */
export function readChannelsSection(value: unknown): ChannelsSection {
  return parseWith(channelsSectionSchema, value, "channels");
}

/** Validate `channel_connections:` (absent = disabled). */
export function readChannelConnections(value: unknown): ChannelConnectionsSection {
  return parseWith(channelConnectionsSchema, value, "channel_connections");
}

/** The credentials a channel needs before it can start, by DeerFlow's key names. */
export const REQUIRED_CREDENTIALS: Record<ChannelName, readonly string[]> = {
  telegram: ["bot_token"],
  slack: ["bot_token", "app_token"],
  feishu: ["app_id", "app_secret"],
};

/** True when every credential the channel needs has a value. */
export function channelConfigured(name: ChannelName, section: ChannelsSection): boolean {
  const entry = section[name] as Record<string, unknown> | null | undefined;
  if (!entry) return false;
  return REQUIRED_CREDENTIALS[name].every((key) => typeof entry[key] === "string" && (entry[key] as string).trim() !== "");
}
