import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { createAgent, createPresentFilesTool, MemoryCheckpointStore, threadPaths, threadStateSchema, tool } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { ScriptStep } from "@deerflow-ts/harness/testing";
import type { TelegramDouble } from "../../src/testing";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";
import type { ChannelManager } from "../../src/channels";

/** A tool that writes `/mnt/user-data/outputs/{name}` of the run's thread. */
export function writeOutputTool(dataDir: string) {
  return tool({
    name: "write_output",
    description: "Write an output file",
    schema: z.object({ name: z.string(), text: z.string() }),
    execute: async ({ name, text }, rt) => {
      const dir = threadPaths(dataDir, "default", rt.context.thread_id).outputs;
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, name), text);
      return `wrote ${name}`;
    },
  });
}

/** What a channel test holds. */
export interface ChannelGateway extends TestGateway {
  manager(): ChannelManager;
  sleeps: number[];
}

/** A gateway with the given `channels:` section, a scripted model, and the tools a channel test needs. */
export async function startChannelGateway(steps: ScriptStep[], channels: Record<string, unknown>, extra: { chunkChars?: number; channelConnections?: Record<string, unknown> } = {}): Promise<ChannelGateway> {
  const sleeps: number[] = [];
  const model = new ScriptedModel(steps, { chunkChars: extra.chunkChars ?? 4 });
  const checkpointer = new MemoryCheckpointStore();
  let dataDir = "";
  const gw = await startTestGateway({
    checkpointer,
    appConfig: { models: [{ name: "scripted", display_name: "Scripted", use: "test", model: "scripted" }] as never, channels, channel_connections: extra.channelConnections },
    channels: {
      editIntervalMs: 0,
      // backoff waits are recorded and return at once: the test sees what was asked for without waiting it out
      sleep: async (ms) => void sleeps.push(ms),
    },
    agentFactory: () =>
      createAgent({ model, tools: [writeOutputTool(dataDir), createPresentFilesTool()], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
  });
  dataDir = gw.dataDir;
  (gw as { model: ScriptedModel }).model = model;
  return Object.assign(gw, {
    sleeps,
    manager: () => {
      const m = gw.gateway.channels.opened();
      if (!m) throw new Error("the channel manager was not opened");
      return m;
    },
  });
}

/** Resolves once the adapter took `update` (its next poll confirmed it) and every queued message was handled. */
export async function handled(double: TelegramDouble, gw: ChannelGateway, update: Record<string, unknown>): Promise<void> {
  const id = update.update_id as number;
  await double.calls.until((calls) => calls.some((c) => c.method === "getUpdates" && Number(c.params.offset) > id));
  await gw.manager().idle();
}

/** Resolves once the adapter polled again after now (a redelivered update was taken), and the queue is idle. */
export async function polledAgain(double: TelegramDouble, gw: ChannelGateway): Promise<void> {
  const n = double.calls.items.filter((c) => c.method === "getUpdates").length;
  await double.calls.until((calls) => calls.filter((c) => c.method === "getUpdates").length > n);
  await gw.manager().idle();
}

/** Wait until the Telegram channel polls (it is connected). */
export async function connected(double: TelegramDouble): Promise<void> {
  await double.calls.until((calls) => calls.some((c) => c.method === "getUpdates"));
}

