/**
 * Attaching memory to a `DeerFlowRuntime`: one `MemoryService` per runtime,
 * built from `memory:` and the data dir, its updater resolving models through
 * the runtime's model factory (`backend_config.model`, else the default chat
 * model). The lead agent reads it from `runtime.extensions.memory`; the queue
 * is flushed when the runtime closes; a deleted thread's summary is forgotten.
 */
import type { AppConfig } from "../config";
import { createChatModel } from "../models";
import type { CreateChatModelOptions, CreatedChatModel } from "../models";
import { MemoryService } from "./service";

/** What memory needs from the runtime (structural, so this folder does not import it). */
export interface MemoryHost {
  readonly dataDir: string;
  config(): AppConfig | undefined;
  readonly extensions: { memory?: MemoryService };
  onClose(hook: () => void | Promise<void>): void;
  onThreadDeleted(hook: (threadId: string, userId: string) => void | Promise<void>): void;
}

/** Options of {@link attachMemory}. */
export interface AttachMemoryOptions {
  modelFactory?: (config: AppConfig, name: string | null | undefined, options: CreateChatModelOptions) => CreatedChatModel;
  log?: (message: string) => void;
}

/** Create the runtime's memory service (none when `memory.enabled` is false). */
export function attachMemory(host: MemoryHost, options: AttachMemoryOptions = {}): MemoryService | undefined {
  const config = host.config();
  const section = (config as { memory?: unknown } | undefined)?.memory ?? {};
  if ((section as { enabled?: unknown }).enabled === false) return undefined;
  const factory = options.modelFactory ?? ((cfg, name, opts) => createChatModel(cfg, name, opts));
  const log = options.log ?? ((m: string) => console.warn(m));
  const service = new MemoryService({
    config: section,
    dataDir: host.dataDir,
    models: (config?.models ?? []) as Array<{ name?: string; model?: string; api_key?: string | null; base_url?: string | null }>,
    resolveModel: (name) => {
      const current = host.config();
      if (!current) throw new Error("the runtime has no config (no models)");
      return factory(current, name, { thinkingEnabled: false }).model;
    },
    logger: { warn: (m) => log(`[deerflow:memory] ${m}`) },
  });
  host.extensions.memory = service;
  host.onClose(() => service.close());
  host.onThreadDeleted((threadId, userId) => service.forgetThread(threadId, userId));
  return service;
}
