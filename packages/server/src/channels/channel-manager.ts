import { randomUUID } from "node:crypto";
import type { GatewayContext } from "../context";
import { createAdapter } from "./adapters";
import { ChannelStore } from "./channel-store";
import type { DeliveryRecord } from "./channel-store";
import { CHANNEL_NAMES, channelConfigured, readChannelConnections, readChannelsSection } from "./config";
import type { ChannelConnectionsSection, ChannelName, ChannelsSection } from "./config";
import { ChannelDispatcher } from "./dispatcher";
import { InboundQueue } from "./inbound-queue";
import { realSleep } from "./types";
import type { ChannelAdapter, InboundMessage, Sleep } from "./types";

/** One channel as the status routes and the Channels page show it. */
export interface ChannelStatus {
  name: ChannelName;
  enabled: boolean;
  configured: boolean;
  running: boolean;
  /** `stopped`, `starting`, `running` (connected), `error` (its last start or connection failed; it keeps retrying). */
  state: "stopped" | "starting" | "running" | "error";
  error: string | null;
  startedAt: string | null;
  lastMessageAt: string | null;
  /** Messages handled by this process since it started, by outcome. */
  counts: { received: number; replied: number; commands: number; duplicates: number; ignored: number; failed: number };
}

/** Options of {@link ChannelManager.open}. */
export interface ChannelManagerOptions {
  ctx: GatewayContext;
  /** In-process requests to the gateway's API (the `/goal` command). */
  request?: (path: string, init?: RequestInit) => Promise<Response>;
  /** Backoff waits (429 `retry_after`, reconnects); tests pass one that records and returns at once. */
  sleep?: Sleep;
  /** Least time between two edits of a streaming reply (default 1000 ms). */
  editIntervalMs?: number;
  clock?: () => number;
}

interface Slot {
  status: ChannelStatus;
  adapter?: ChannelAdapter;
}

function emptyStatus(name: ChannelName): ChannelStatus {
  return { name, enabled: false, configured: false, running: false, state: "stopped", error: null, startedAt: null, lastMessageAt: null, counts: { received: 0, replied: 0, commands: 0, duplicates: 0, ignored: 0, failed: 0 } };
}

/**
 * The IM channels of one server process: starts each enabled channel's
 * adapter, claims every inbound message in the store before queueing it,
 * handles the queue (`channels.max_concurrency` workers,
 * `channels.inbound_queue_maxsize` waiting) and keeps each channel's
 * status. A channel that fails to start or loses its connection is marked
 * `error` and retried by its adapter; the others, the runs and the gateway
 * carry on.
 */
export class ChannelManager {
  readonly owner = `channels-${randomUUID()}`;
  private readonly slots = new Map<ChannelName, Slot>(CHANNEL_NAMES.map((n) => [n, { status: emptyStatus(n) }]));
  private readonly dispatcher: ChannelDispatcher;
  private queue: InboundQueue<{ adapter: ChannelAdapter; message: InboundMessage }> | undefined;
  /** Values set through the admin runtime-config routes, over config.yaml's. */
  private readonly overrides = new Map<ChannelName, Record<string, unknown> | null>();
  private readonly sleep: Sleep;
  private readonly clock: () => number;
  private sectionError: string | null = null;
  private stopped = false;

  private constructor(
    private readonly ctx: GatewayContext,
    readonly store: ChannelStore,
    options: ChannelManagerOptions,
  ) {
    this.sleep = options.sleep ?? realSleep;
    this.clock = options.clock ?? Date.now;
    this.dispatcher = new ChannelDispatcher({
      ctx,
      store,
      owner: this.owner,
      channels: () => this.section(),
      connections: () => this.connections(),
      request: options.request,
      editIntervalMs: options.editIntervalMs ?? 1000,
      clock: this.clock,
      log: (m) => ctx.options.log(m),
    });
  }

  /** Open the channel tables (PostgreSQL when the runtime has a pool, else `{dataDir}/channels.db`). */
  static async open(options: ChannelManagerOptions): Promise<ChannelManager> {
    const { ctx } = options;
    const store = ctx.runtime.pgPool ? await ChannelStore.openPostgres(ctx.runtime.pgPool) : ChannelStore.openSqlite(ctx.options.dataDir);
    const manager = new ChannelManager(ctx, store, options);
    for (const name of CHANNEL_NAMES) {
      const saved = await store.getCursor(name, "runtime_config");
      if (saved !== undefined) manager.overrides.set(name, JSON.parse(saved) as Record<string, unknown> | null);
    }
    return manager;
  }

  private rawConfig(): Record<string, unknown> {
    return ((this.ctx.runtime.config() ?? this.ctx.options.appConfig) ?? {}) as Record<string, unknown>;
  }

  /** `channels:` as of now: config.yaml, with the admin's runtime values over it. A broken section reads as empty (and is reported). */
  section(): ChannelsSection {
    const raw = { ...((this.rawConfig().channels as Record<string, unknown> | null | undefined) ?? {}) };
    for (const [name, value] of this.overrides) {
      if (value === null) delete raw[name];
      else raw[name] = { ...((raw[name] as Record<string, unknown> | undefined) ?? {}), ...value };
    }
    try {
      const section = readChannelsSection(raw);
      this.sectionError = null;
      return section;
    } catch (err) {
      this.sectionError = (err as Error).message;
      return readChannelsSection({});
    }
  }

  /** `channel_connections:` as of now. */
  connections(): ChannelConnectionsSection {
    try {
      return readChannelConnections(this.rawConfig().channel_connections);
    } catch (err) {
      this.ctx.options.log(`[channels] ${(err as Error).message}`);
      return readChannelConnections({});
    }
  }

  /** True when some channel is enabled (the gateway starts the manager only then). */
  anyEnabled(): boolean {
    const section = this.section();
    return this.sectionError !== null || CHANNEL_NAMES.some((n) => section[n]?.enabled);
  }

  /** Start every enabled channel. Never throws: a channel that cannot start is marked `error`. */
  async start(): Promise<void> {
    this.stopped = false;
    const section = this.section();
    if (this.sectionError) this.ctx.options.log(`[channels] ${this.sectionError}`);
    this.queue = new InboundQueue((item) => this.process(item.adapter, item.message), { maxsize: section.inbound_queue_maxsize, concurrency: section.max_concurrency });
    await Promise.all(CHANNEL_NAMES.map((n) => this.startChannel(n)));
  }

  private async startChannel(name: ChannelName): Promise<void> {
    const slot = this.slots.get(name)!;
    const section = this.section();
    const entry = section[name];
    slot.status.enabled = entry?.enabled === true;
    slot.status.configured = channelConfigured(name, section);
    if (!slot.status.enabled) return;
    if (!slot.status.configured) {
      slot.status.state = "error";
      slot.status.error = this.sectionError ?? `channels.${name} is enabled but misses ${name === "telegram" ? "bot_token" : name === "slack" ? "bot_token or app_token" : "app_id or app_secret"}`;
      return;
    }
    slot.status.state = "starting";
    slot.status.error = null;
    try {
      const adapter = await createAdapter(name, section, { sleep: this.sleep, log: (m) => this.ctx.options.log(m), store: this.store });
      slot.adapter = adapter;
      await adapter.start(
        (message) => this.accept(adapter, message),
        (err) => {
          slot.status.state = "error";
          slot.status.running = false;
          slot.status.error = (err as Error).message ?? String(err);
          this.ctx.options.log(`[channels] ${name}: ${slot.status.error}`);
        },
      );
      slot.status.state = "running";
      slot.status.running = true;
      slot.status.startedAt = new Date(this.clock()).toISOString();
      void this.recoverUnfinished(adapter);
    } catch (err) {
      slot.status.state = "error";
      slot.status.running = false;
      slot.status.error = (err as Error).message ?? String(err);
      this.ctx.options.log(`[channels] ${name} did not start: ${slot.status.error}`);
    }
  }

  /** The adapter's sink: claim first (a redelivery stops here), then queue. */
  private async accept(adapter: ChannelAdapter, message: InboundMessage): Promise<void> {
    const slot = this.slots.get(adapter.name)!;
    slot.status.state = "running";
    slot.status.running = true;
    slot.status.error = null;
    slot.status.lastMessageAt = new Date(this.clock()).toISOString();
    slot.status.counts.received++;
    if (!(await this.dispatcher.claim(message))) {
      slot.status.counts.duplicates++;
      const record = await this.store.getDelivery(message.channel, message.messageId);
      if (record) void this.dispatcher.recover(adapter, record).catch(() => undefined);
      return;
    }
    try {
      this.queue!.push(`${message.channel}:${ChannelDispatcher.chatKey(message)}`, { adapter, message });
    } catch (err) {
      slot.status.counts.failed++;
      await this.store.updateDelivery(message.channel, message.messageId, { status: "failed", error: (err as Error).message }, new Date(this.clock()).toISOString());
    }
  }

  private async process(adapter: ChannelAdapter, message: InboundMessage): Promise<void> {
    const outcome = await this.dispatcher.handle(adapter, message);
    const counts = this.slots.get(adapter.name)!.status.counts;
    if (outcome === "replied") counts.replied++;
    else if (outcome === "command") counts.commands++;
    else if (outcome === "ignored") counts.ignored++;
    else if (outcome === "failed") counts.failed++;
  }

  /** Finish the replies a dead process left (their runs ended) for one channel. */
  private async recoverUnfinished(adapter: ChannelAdapter): Promise<void> {
    try {
      const records = (await this.store.unfinished()).filter((r: DeliveryRecord) => r.channel === adapter.name);
      for (const r of records) await this.dispatcher.recover(adapter, r);
    } catch (err) {
      this.ctx.options.log(`[channels] ${adapter.name}: recovering unfinished replies failed: ${(err as Error).message}`);
    }
  }

  /** Every channel's status. */
  status(): ChannelStatus[] {
    const section = this.section();
    return CHANNEL_NAMES.map((n) => {
      const s = this.slots.get(n)!.status;
      return { ...s, enabled: section[n]?.enabled === true, configured: channelConfigured(n, section), counts: { ...s.counts } };
    });
  }

  /** A config error of the `channels:` section, if any. */
  configError(): string | null {
    this.section();
    return this.sectionError;
  }

  /** Stop and start one channel (its new config applies). */
  async restart(name: ChannelName): Promise<boolean> {
    const slot = this.slots.get(name)!;
    await this.stopChannel(name);
    if (!this.queue) {
      const section = this.section();
      this.queue = new InboundQueue((item) => this.process(item.adapter, item.message), { maxsize: section.inbound_queue_maxsize, concurrency: section.max_concurrency });
    }
    await this.startChannel(name);
    return slot.status.state === "running" || (!slot.status.enabled && slot.status.state === "stopped");
  }

  private async stopChannel(name: ChannelName): Promise<void> {
    const slot = this.slots.get(name)!;
    const adapter = slot.adapter;
    slot.adapter = undefined;
    slot.status.running = false;
    slot.status.state = "stopped";
    if (adapter) await adapter.stop().catch((err: unknown) => this.ctx.options.log(`[channels] ${name}: stop failed: ${(err as Error).message}`));
  }

  /** Set (or with null remove) a channel's runtime values, kept in the store; the channel restarts. */
  async setRuntimeConfig(name: ChannelName, values: Record<string, unknown> | null): Promise<boolean> {
    this.overrides.set(name, values);
    await this.store.setCursor(name, "runtime_config", JSON.stringify(values));
    return this.restart(name);
  }

  /** The runtime values set for a channel, if any. */
  runtimeConfig(name: ChannelName): Record<string, unknown> | null | undefined {
    return this.overrides.get(name);
  }

  /** Wait until every queued message was handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue?.idle() ?? Promise.resolve();
  }

  /** Stop every channel; accepted messages get `shutdown_grace_period_seconds` to finish. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(CHANNEL_NAMES.map((n) => this.stopChannel(n)));
    const grace = this.section().shutdown_grace_period_seconds * 1000;
    if (this.queue && grace > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.queue.idle(), new Promise<void>((r) => (timer = setTimeout(r, grace)))]);
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.stop();
    await this.store.close();
  }
}
