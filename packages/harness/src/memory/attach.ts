/**
 * Attaching memory to a `DeerFlowRuntime`: one `MemoryService` per runtime,
 * built from `memory:` and the data dir, its updater resolving models through
 * the runtime's model factory (`backend_config.model`, else the default chat
 * model). The memory capability (capabilities/memory.ts) stores it as
 * `runtime.extensions.memory`, flushes its queue when the runtime closes and
 * forgets a deleted thread's summary.
 */
import type { AppConfig } from "../config";
import { createChatModel } from "../models";
import type { CreateChatModelOptions, CreatedChatModel } from "../models";
import { MemoryService } from "./service";

/** What memory needs from the runtime (structural, so this folder does not import it). */
export interface MemoryHost {
  readonly dataDir: string;
  config(): AppConfig | undefined;
  /** The runtime's PostgreSQL pool (`database.backend: postgres`), shared by the memory index. */
  readonly pgPool?: import("pg").Pool;
}

/** Options of {@link attachMemory}. */
export interface AttachMemoryOptions {
  modelFactory?: (config: AppConfig, name: string | null | undefined, options: CreateChatModelOptions) => CreatedChatModel;
  log?: (message: string) => void;
}

/**
 * Create the runtime's memory service (none when `memory.enabled` is false).
 * The caller owns it: `close()` flushes the queue, `forgetThread` drops a
 * deleted thread's summary.
 */
export function attachMemory(host: MemoryHost, options: AttachMemoryOptions = {}): MemoryService | undefined {
  const config = host.config();
  const section = (config as { memory?: unknown } | undefined)?.memory ?? {};
  if ((section as { enabled?: unknown }).enabled === false) return undefined;
  const factory = options.modelFactory ?? ((cfg, name, opts) => createChatModel(cfg, name, opts));
  const log = options.log ?? ((m: string) => console.warn(m));
  const service = new MemoryService({
    config: section,
    dataDir: host.dataDir,
    database: config?.database,
    pgPool: host.pgPool,
    models: (config?.models ?? []) as Array<{ name?: string; model?: string; api_key?: string | null; base_url?: string | null }>,
    resolveModel: (name) => {
      const current = host.config();
      if (!current) throw new Error("the runtime has no config (no models)");
      return factory(current, name, { thinkingEnabled: false }).model;
    },
    logger: { warn: (m) => log(`[deerflow:memory] ${m}`) },
  });
  return service;
}
