import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { RunSignal, RunSignals } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import { dispatchSignal } from "./memory-signals";

/** The pub/sub channel run signals travel on. */
export const DEFAULT_SIGNALS_CHANNEL = "deerflow:run_signals";

const signalSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("cancel"), runId: z.string().min(1), action: z.enum(["interrupt", "rollback"]) }),
  z.object({ type: z.literal("thread_released"), threadId: z.string().min(1) }),
]);

/** A message on the channel: the signal and the process that sent it. */
const messageSchema = z.object({ origin: z.string(), signal: signalSchema });

/** What {@link createRedisRunSignals} runs on. */
export interface RedisRunSignalsOptions {
  /** Publishes. */
  cmd: Redis;
  /** Subscribed to the channel (a subscribed connection can do nothing else). */
  sub: Redis;
  channel?: string;
  clean(err: unknown): string;
  log(message: string): void;
}

/**
 * Run signals over Redis pub/sub. This process's listeners get a signal
 * synchronously when it is published here; other processes get it from
 * the channel (their own messages are recognised by origin and skipped).
 * A message that is not a valid signal is logged and dropped.
 */
export async function createRedisRunSignals(options: RedisRunSignalsOptions): Promise<RunSignals> {
  const channel = options.channel ?? DEFAULT_SIGNALS_CHANNEL;
  const origin = randomUUID();
  let listeners: ((signal: RunSignal) => void)[] = [];
  const onMessage = (ch: string, text: string) => {
    if (ch !== channel) return;
    let parsed: z.infer<typeof messageSchema>;
    try {
      parsed = messageSchema.parse(JSON.parse(text));
    } catch {
      options.log(`Redis run signals: dropped a message on ${channel} that is not a run signal.`);
      return;
    }
    if (parsed.origin !== origin) dispatchSignal(listeners, parsed.signal);
  };
  options.sub.on("message", onMessage);
  try {
    await options.sub.subscribe(channel);
  } catch (err) {
    options.sub.off("message", onMessage);
    throw new StreamBridgeError(`Redis run signals: cannot subscribe to ${channel}: ${options.clean(err)}`, { code: "stream_bridge_unavailable" });
  }
  return {
    async publish(signal: RunSignal): Promise<void> {
      dispatchSignal(listeners, signal);
      try {
        await options.cmd.publish(channel, JSON.stringify({ origin, signal }));
      } catch (err) {
        throw new StreamBridgeError(`Redis run signals: publishing a ${signal.type} signal failed: ${options.clean(err)}`, {
          code: "stream_bridge_unavailable",
        });
      }
    },
    subscribe(listener: (signal: RunSignal) => void): () => void {
      listeners = [...listeners, listener];
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    async close(): Promise<void> {
      listeners = [];
      options.sub.off("message", onMessage);
    },
  };
}
