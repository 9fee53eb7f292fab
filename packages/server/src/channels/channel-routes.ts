import { randomBytes } from "node:crypto";
import type { Hono } from "hono";
import { z } from "zod";
import { requireAdmin, userOf } from "../auth";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";
import type { ChannelManager } from "./channel-manager";
import { CHANNEL_NAMES, channelConfigured, REQUIRED_CREDENTIALS } from "./config";
import type { ChannelName } from "./config";
import type { ChannelsHost } from "./channels-host";

/** How long a binding code is valid (DeerFlow's 600 s). */
export const CONNECT_CODE_TTL_SECONDS = 600;
const MAX_PENDING_CODES = 5;
const MASKED = "********";
const ADMIN_CREDENTIALS = "Admin privileges required to manage channel runtime credentials.";
const ADMIN_WORKERS = "Admin privileges required to manage channel runtime workers.";

const META: Record<ChannelName, { display_name: string; auth_mode: string }> = {
  telegram: { display_name: "Telegram", auth_mode: "deep_link" },
  slack: { display_name: "Slack", auth_mode: "binding_code" },
  feishu: { display_name: "Feishu", auth_mode: "binding_code" },
};

const FIELDS: Record<ChannelName, Array<{ name: string; label: string; type: string; required: boolean }>> = {
  telegram: [
    { name: "bot_token", label: "Bot token", type: "password", required: true },
    { name: "bot_username", label: "Bot username", type: "text", required: true },
  ],
  slack: [
    { name: "bot_token", label: "Bot token", type: "password", required: true },
    { name: "app_token", label: "App token", type: "password", required: true },
  ],
  feishu: [
    { name: "app_id", label: "App ID", type: "text", required: true },
    { name: "app_secret", label: "App secret", type: "password", required: true },
  ],
};

const runtimeConfigBody = z.object({ values: z.record(z.string(), z.string()).default({}) });

function providerOf(raw: string): ChannelName {
  if ((CHANNEL_NAMES as readonly string[]).includes(raw)) return raw as ChannelName;
  throw new HttpError(404, "Unknown channel provider");
}

/**
 * DeerFlow's channel routes: `GET /channels` (every channel's status),
 * `GET /channels/providers`, `GET|DELETE /channels/connections[/{id}]`,
 * `POST /channels/{provider}/connect` (a one-time binding code),
 * admin-only `POST|DELETE /channels/{provider}/runtime-config` and
 * `POST /channels/{name}/restart`; plus `GET /channels/deliveries` (ours,
 * admin-only: the newest inbound messages and what became of each).
 */
export function registerChannelRoutes(api: Hono, ctx: GatewayContext, host: ChannelsHost): void {
  const now = () => Date.now();

  const providerJson = (manager: ChannelManager, name: ChannelName, connected: boolean) => {
    const section = manager.section();
    const conn = manager.connections();
    const status = manager.status().find((s) => s.name === name)!;
    const enabled = conn[name]?.enabled === true || section[name]?.enabled === true;
    const configured = channelConfigured(name, section);
    const running = host.running ? status.running : null;
    const unavailable = !enabled ? null : !configured ? `Enter the required ${META[name].display_name} credentials to connect this channel.` : running === false ? `${META[name].display_name} channel is configured but is not running. Check the credentials and service logs.` : null;
    const values: Record<string, string> = {};
    const entry = (section[name] ?? {}) as Record<string, unknown>;
    for (const f of FIELDS[name]) {
      const v = String(entry[f.name] ?? (name === "telegram" && f.name === "bot_username" ? (conn.telegram?.bot_username ?? "") : "")).trim();
      if (v) values[f.name] = f.type === "password" ? MASKED : v;
    }
    const authOff = !ctx.auth.check().enabled;
    return {
      provider: name,
      display_name: META[name].display_name,
      enabled,
      configured,
      connectable: enabled && configured && unavailable === null,
      unavailable_reason: unavailable,
      auth_mode: META[name].auth_mode,
      // with auth off every chat runs as the default user: a running channel needs no binding
      connection_status: unavailable === null && (connected || (authOff && configured)) ? "connected" : "not_connected",
      credential_fields: FIELDS[name],
      credential_values: values,
      // ours: the channel's live state
      status: status.state,
      error: status.error,
    };
  };

  api.get("/channels", async (c) => {
    const manager = await host.get();
    return c.json({ service_running: host.running, channels: Object.fromEntries(manager.status().map((s) => [s.name, { ...s }])), config_error: manager.configError() });
  });

  api.get("/channels/providers", async (c) => {
    const manager = await host.get();
    const user = userOf(c).id;
    const connections = await manager.store.listConnections(user);
    const conn = manager.connections();
    const section = manager.section();
    const enabledNames = CHANNEL_NAMES.filter((n) => conn[n]?.enabled === true || section[n]?.enabled === true);
    return c.json({
      enabled: conn.enabled || enabledNames.length > 0,
      providers: enabledNames.map((n) => providerJson(manager, n, connections.some((x) => x.provider === n))),
    });
  });

  api.get("/channels/connections", async (c) => {
    const manager = await host.get();
    const rows = await manager.store.listConnections(userOf(c).id);
    return c.json({
      connections: rows.map((r) => ({
        id: r.id,
        provider: r.provider,
        status: r.status,
        external_account_id: r.externalAccountId,
        external_account_name: r.externalAccountName,
        workspace_id: r.workspaceId,
        workspace_name: null,
        scopes: [],
        metadata: { connected_at: r.createdAt },
      })),
    });
  });

  api.delete("/channels/connections/:id", async (c) => {
    const manager = await host.get();
    if (!(await manager.store.disconnect(c.req.param("id"), userOf(c).id, new Date().toISOString()))) throw new HttpError(404, "Channel connection not found");
    return c.body(null, 204);
  });

  api.get("/channels/deliveries", async (c) => {
    requireAdmin(c, ADMIN_WORKERS);
    const manager = await host.get();
    const channel = c.req.query("channel");
    if (channel) providerOf(channel);
    const limit = Math.min(200, Math.max(1, Number(c.req.query("limit") ?? 50) || 50));
    const rows = await manager.store.recentDeliveries(channel ?? null, limit);
    return c.json({
      deliveries: rows.map((r) => ({ channel: r.channel, message_id: r.messageId, chat_id: r.chatId, status: r.status, thread_id: r.threadId, run_id: r.runId, reply_message_id: r.replyMessageId, error: r.error, created_at: r.createdAt, updated_at: r.updatedAt })),
    });
  });

  api.post("/channels/:provider/connect", async (c) => {
    const name = providerOf(c.req.param("provider"));
    const manager = await host.get();
    const p = providerJson(manager, name, false);
    if (!p.enabled) throw new HttpError(400, "Channel provider is not enabled");
    if (p.unavailable_reason) throw new HttpError(400, p.unavailable_reason);
    const user = userOf(c).id;
    if ((await manager.store.pendingCodes(name, user, now())) >= MAX_PENDING_CODES) {
      throw new HttpError(429, "Too many pending channel connection codes. Wait for existing codes to expire or use one of them.");
    }
    const code = randomBytes(12).toString("base64url");
    await manager.store.addConnectCode(code, name, user, now() + CONNECT_CODE_TTL_SECONDS * 1000);
    const botUsername = String((manager.section().telegram as { bot_username?: string } | null)?.bot_username || manager.connections().telegram?.bot_username || "").trim();
    return c.json({
      provider: name,
      mode: META[name].auth_mode,
      url: name === "telegram" && botUsername ? `https://t.me/${botUsername.replace(/^@/, "")}?start=${code}` : null,
      code,
      instruction: name === "telegram" ? `Send /start ${code} to the DeerFlow Telegram bot.` : `Send /connect ${code} to the DeerFlow ${META[name].display_name} bot.`,
      expires_in: CONNECT_CODE_TTL_SECONDS,
    });
  });

  api.post("/channels/:provider/runtime-config", async (c) => {
    requireAdmin(c, ADMIN_CREDENTIALS);
    const name = providerOf(c.req.param("provider"));
    const body = await readJson(c, runtimeConfigBody, 64 * 1024);
    const manager = await host.get();
    const current = (manager.section()[name] ?? {}) as Record<string, unknown>;
    const values: Record<string, unknown> = { enabled: true };
    const missing: string[] = [];
    const required = name === "telegram" ? [...REQUIRED_CREDENTIALS.telegram, "bot_username"] : REQUIRED_CREDENTIALS[name];
    for (const key of required) {
      const given = (body.values[key] ?? "").trim();
      // the masked placeholder the providers route showed keeps the stored secret
      const value = given && given !== MASKED ? given : String(current[key] ?? "").trim();
      if (!value) missing.push(key);
      values[key] = value;
    }
    if (missing.length) throw new HttpError(400, `Missing required channel configuration: ${missing.join(", ")}`);
    const started = await manager.setRuntimeConfig(name, values);
    if (!started && host.running) throw new HttpError(400, `Failed to start ${META[name].display_name} channel. Check the values and try again.`);
    return c.json(providerJson(manager, name, false));
  });

  api.delete("/channels/:provider/runtime-config", async (c) => {
    requireAdmin(c, ADMIN_CREDENTIALS);
    const name = providerOf(c.req.param("provider"));
    const manager = await host.get();
    await manager.setRuntimeConfig(name, null);
    await manager.store.disconnectProvider(name, new Date().toISOString());
    return c.json(providerJson(manager, name, false));
  });

  api.post("/channels/:name/restart", async (c) => {
    requireAdmin(c, ADMIN_WORKERS);
    const name = providerOf(c.req.param("name"));
    const manager = await host.get();
    const ok = await manager.restart(name);
    return c.json({ success: ok, message: ok ? `Channel ${name} restarted successfully` : `Failed to restart channel ${name}` });
  });
}
