import type { GatewayContext } from "../context";
import { ChannelManager } from "./channel-manager";
import type { ChannelManagerOptions } from "./channel-manager";

/** What the gateway's options may set of the channels (tests: the backoff sleep, the edit interval, the clock). */
export type ChannelHostOptions = Omit<ChannelManagerOptions, "ctx" | "request">;

/**
 * The gateway's hold on its channels: the manager (and the channel tables)
 * is opened on first use — the first enabled channel at start, or the first
 * channel route — so a server without channels opens nothing for them.
 */
export class ChannelsHost {
  private opening: Promise<ChannelManager> | undefined;
  private manager: ChannelManager | undefined;
  private started = false;

  constructor(private readonly options: ChannelManagerOptions) {}

  /** The manager, opened once. */
  get(): Promise<ChannelManager> {
    this.opening ??= ChannelManager.open(this.options).then((m) => (this.manager = m));
    return this.opening;
  }

  /** The manager if it was opened. */
  opened(): ChannelManager | undefined {
    return this.manager;
  }

  private rawChannels(ctx: GatewayContext): unknown {
    return ((ctx.runtime.config() ?? ctx.options.appConfig) as { channels?: unknown } | undefined)?.channels;
  }

  /** Start the enabled channels (none enabled: nothing is opened). Never throws. */
  async start(): Promise<void> {
    const raw = this.rawChannels(this.options.ctx) as Record<string, { enabled?: unknown } | null> | null | undefined;
    const anyEnabled = raw && typeof raw === "object" && Object.values(raw).some((v) => v && typeof v === "object" && v.enabled === true);
    if (!anyEnabled && !this.manager) return;
    try {
      const manager = await this.get();
      this.started = true;
      await manager.start();
    } catch (err) {
      this.options.ctx.options.log(`[channels] could not start: ${(err as Error).message}`);
    }
  }

  /** Whether {@link start} started the manager. */
  get running(): boolean {
    return this.started;
  }

  async close(): Promise<void> {
    const manager = this.opening ? await this.opening.catch(() => undefined) : undefined;
    this.started = false;
    await manager?.close();
    this.opening = undefined;
    this.manager = undefined;
  }
}
