import { randomUUID } from "node:crypto";
import path from "node:path";
import { isoNow } from "../clock";
import { readRuntimeOptions } from "../agents";
import { ConfigManager, silentConfigLogger } from "../config";
import type { AppConfig } from "../config";
import { DeerFlowRuntime } from "../deerflow-runtime";
import type { RunSettings } from "../deerflow-runtime";
import { ConfigError, DeerFlowError } from "../errors";
import { humanMessage } from "../messages";
import type { Message } from "../messages";
import { redactSecretKeys } from "../persistence";
import type { PersistenceStores } from "../persistence";
import { assertThreadId } from "../runtime";
import type { Agent, StreamEvent } from "../runtime";
import type { RunEndState } from "../runs";
import { DEFAULT_LOCAL_USER, readArtifact, threadPaths, UploadError, UploadManager } from "../uploads";
import type { ThreadPaths, UploadDeleteResponse, UploadListResponse, UploadResponse } from "../uploads";
import { buildModelsResponse, threadDetailResponse, threadSummaryResponse, toJsonSafe } from "./gateway-shapes";
import type { ModelsResponse, ThreadResponse } from "./gateway-shapes";
import { importLegacyThreadIndex } from "./legacy-thread-index";
import { ClientStreamTranslator } from "./stream-translator";
import { clientUsageOfRun } from "./usage";
import type { ClientRunOptions, ClientStreamEvent, DeerFlowClientOptions } from "./types";
import type { MemoryDocument } from "../memory";
import { readMcpConfig, updateMcpConfig } from "../mcp";
import type { McpConfigResponse, McpServerStatus } from "../mcp";
import { memoryOf } from "./memory";
import type { MemoryStatusResponse } from "./memory";

/** The answer of {@link DeerFlowClient.getArtifact}. */
export interface ClientArtifact {
  bytes: Buffer;
  mimeType: string;
}

function threadNotFound(threadId: string): UploadError {
  return new UploadError("thread_not_found", `Thread ${threadId} not found`, 404, { details: { thread_id: threadId } });
}

/** A copy of a context without its `secrets` mapping. */
function withoutSecrets(context: Record<string, unknown>): Record<string, unknown> {
  const { secrets: _secrets, ...rest } = context;
  return rest;
}

/**
 * DeerFlow without a server: runs the agent in-process on a
 * {@link DeerFlowRuntime} (its own, or one shared with a gateway), keeps
 * threads in the runtime's checkpointer, thread metadata, run records and
 * transcripts in the same stores as the gateway (`{dataDir}/gateway.db`),
 * thread files under `{dataDir}/users/…`, and answers with the gateway's JSON
 * shapes, built by the same functions. Run bookkeeping is the runtime's run
 * recorder, the same code the gateway uses.
 */
export class DeerFlowClient {
  readonly dataDir: string;
  readonly userId: string;
  private readonly options: DeerFlowClientOptions;
  private readonly sharedRuntime: DeerFlowRuntime | undefined;
  private opening: Promise<DeerFlowRuntime> | undefined;
  private manager: ConfigManager | undefined;
  private managerLoaded = false;
  private legacyImported: Promise<void> | undefined;

  constructor(optionsOrRuntime: DeerFlowClientOptions | DeerFlowRuntime = {}) {
    const options: DeerFlowClientOptions = optionsOrRuntime instanceof DeerFlowRuntime ? { runtime: optionsOrRuntime } : optionsOrRuntime;
    this.options = options;
    this.sharedRuntime = options.runtime;
    const cwd = options.cwd ?? process.cwd();
    this.dataDir = options.runtime?.dataDir ?? path.resolve(cwd, options.dataDir ?? ".deer-flow");
    this.userId = options.userId ?? DEFAULT_LOCAL_USER;
  }

  /**
   * The app config (loaded lazily, re-read when the file changes). Without an
   * explicit path, a missing config.yaml is tolerated only when an agent
   * factory was injected.
   */
  get appConfig(): AppConfig | undefined {
    if (this.sharedRuntime) return this.sharedRuntime.config();
    return this.configManager()?.get();
  }

  private configManager(): ConfigManager | undefined {
    if (this.managerLoaded) return this.manager;
    const o = this.options;
    const manager = new ConfigManager({ path: o.configPath, cwd: o.cwd, logger: silentConfigLogger });
    if (o.appConfig) manager.set(o.appConfig);
    else {
      try {
        manager.get();
      } catch (err) {
        const notFound = err instanceof ConfigError && err.code === "config_not_found";
        if (!(notFound && !o.configPath && o.agentFactory)) throw err;
        this.managerLoaded = true;
        return undefined;
      }
    }
    this.manager = manager;
    this.managerLoaded = true;
    return manager;
  }

  /** The runtime this client runs on (opened on first use unless one was given). */
  runtime(): Promise<DeerFlowRuntime> {
    if (this.sharedRuntime) return Promise.resolve(this.sharedRuntime);
    if (!this.opening) {
      const o = this.options;
      this.opening = (async () => {
        const config = this.configManager();
        return DeerFlowRuntime.open({
          config,
          allowMissingConfig: !config,
          cwd: o.cwd,
          dataDir: this.dataDir,
          checkpointer: o.checkpointer,
          stores: o.stores,
          agentFactory: o.agentFactory,
          log: () => undefined,
        });
      })();
      this.opening.catch(() => (this.opening = undefined));
    }
    return this.opening;
  }

  /**
   * Thread metadata, run records and transcripts (the runtime's stores). The
   * old JSON thread index is imported once.
   */
  async persistence(): Promise<PersistenceStores> {
    const runtime = await this.runtime();
    this.legacyImported ??= importLegacyThreadIndex(this.dataDir, runtime.stores.threads, this.userId).then(() => undefined);
    await this.legacyImported;
    return runtime.stores;
  }

  /** The run settings of one call, parsed once (the same parser the gateway uses). */
  private settings(overrides: ClientRunOptions = {}, threadId?: string, runId?: string): RunSettings {
    const o = this.options;
    const keys: Record<string, unknown> = {
      model_name: overrides.modelName ?? o.modelName,
      thinking_enabled: overrides.thinkingEnabled ?? o.thinkingEnabled,
      reasoning_effort: overrides.reasoningEffort ?? o.reasoningEffort,
      is_plan_mode: overrides.planMode ?? o.planMode ?? false,
      subagent_enabled: overrides.subagentEnabled ?? o.subagentEnabled ?? false,
      agent_name: o.agentName,
      ...(overrides.context ?? {}),
      user_id: this.userId,
      thread_id: threadId,
      run_id: runId,
    };
    return readRuntimeOptions({}, Object.fromEntries(Object.entries(keys).filter(([, v]) => v !== undefined)));
  }

  /** Build (or reuse) the agent for a call's settings. */
  async getAgent(overrides: ClientRunOptions = {}): Promise<Agent> {
    return (await this.runtime()).buildAgent(this.settings(overrides));
  }

  /** Drop cached agents (the next run rebuilds them). */
  resetAgent(): void {
    this.sharedRuntime?.invalidateAgents();
    void this.opening?.then((r) => r.invalidateAgents(), () => undefined);
  }

  /** Host paths of a thread's data. */
  threadPaths(threadId: string): ThreadPaths {
    return threadPaths(this.dataDir, this.userId, threadId);
  }

  /**
   * Run one turn and stream typed events: `values` snapshots, `messages-tuple`
   * AI text deltas / tool calls / tool results (each once), `custom`, and a
   * final `end` with the turn's cumulative usage. `files` are uploaded first
   * and attached to the message. A failed run throws after the events it
   * produced.
   */
  async *stream(message: string, options: ClientRunOptions = {}): AsyncGenerator<ClientStreamEvent> {
    const threadId = options.threadId ?? randomUUID();
    assertThreadId(threadId);
    const runtime = await this.runtime();
    const stores = await this.persistence();
    const runId = randomUUID();
    const settings = this.settings(options, threadId, runId);
    const row = await stores.threads.get(threadId);
    if (row && row.userId !== this.userId) throw threadNotFound(threadId);
    const before = await runtime.readState(threadId);
    const historical = new Set((before?.values.messages ?? []).map((m) => m.id).filter((id): id is string => !!id));
    const translator = new ClientStreamTranslator(historical);
    const kwargs: Record<string, unknown> = { ...(options.additionalKwargs ?? {}), run_id: runId };
    if (options.files?.length) {
      const up = await this.uploadFiles(threadId, options.files);
      // The same attachment shape the web UI sends: the Uploads middleware turns it into the <current_uploads> block.
      if (up.files.length) kwargs.files = up.files.map((f) => ({ filename: f.filename, size: f.size, path: f.virtual_path, status: "uploaded" }));
      yield { type: "custom", data: { type: "uploads", ...up } };
    }
    const input = humanMessage(message, { additional_kwargs: kwargs });
    const startedAt = isoNow();
    const context: Record<string, unknown> = {
      ...(options.context ?? {}),
      model_name: settings.modelName,
      thinking_enabled: settings.thinkingEnabled,
      reasoning_effort: settings.reasoningEffort,
      is_plan_mode: settings.isPlanMode,
      subagent_enabled: settings.subagentEnabled,
      ...(settings.agentName ? { agent_name: settings.agentName } : {}),
      thread_id: threadId,
      run_id: runId,
      user_id: this.userId,
    };
    // The run's events reach this generator through the service's in-process tap (nothing is published for joins).
    const events: StreamEvent[] = [];
    let wake: (() => void) | undefined;
    const run = await runtime.runs.create({
      threadId,
      runId,
      userId: this.userId,
      assistantId: settings.agentName ?? "lead_agent",
      input: { messages: [input] },
      settings,
      recursionLimit: options.recursionLimit ?? 100,
      streamModes: ["values", "messages", "custom"],
      context,
      // request-scoped secrets belong to the run context only (typed there), never to configurable
      configurable: withoutSecrets(context),
      metadata: {},
      strategy: "reject",
      // Stored like the gateway stores it: secret-looking keys (`secrets`, `api_key`, …) masked.
      kwargs: redactSecretKeys(toJsonSafe({ input: { messages: [input] }, config: { configurable: context }, context: options.context ?? {} })) as Record<string, unknown>,
      createThread: row ? undefined : { threadId, userId: this.userId, status: "running", metadata: {}, displayName: null, createdAt: startedAt, updatedAt: startedAt },
      historicalIds: historical,
      signal: options.signal,
      stream: false,
      onEvent: (event) => {
        events.push(event);
        wake?.();
      },
    });
    let end: RunEndState | undefined;
    void run.done.then((e) => {
      end = e;
      wake?.();
    });
    try {
      for (;;) {
        const event = events.shift();
        if (event) {
          for (const out of translator.translate(event)) yield out;
          continue;
        }
        if (end) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      // also runs when the consumer stops iterating early (the run is interrupted and recorded as such)
      if (!end) {
        await runtime.runs.cancel(runId, "interrupt", true).catch(() => undefined);
        await run.recorded;
      }
    }
    // The turn is over once its bookkeeping is written (run hooks, transcript): a caller may read them next.
    await run.recorded;
    const ended = end as RunEndState;
    if (ended.failure !== undefined) throw ended.failure;
    const result = ended.result;
    if (!result) throw new DeerFlowError("run_failed", ended.error ?? "The run failed");
    if (result.status === "error") {
      const err = result.error ?? new DeerFlowError("run_failed", "The run failed");
      throw err;
    }
    // The run record counts every model call of the turn (sub-agents and middleware too); the streamed messages only the lead agent's.
    const record = await stores.runs.get(runId);
    const usage = record ? clientUsageOfRun(record.usage) : { ...translator.usage };
    yield { type: "end", data: { usage, thread_id: threadId, run_id: runId, status: result.status } };
  }

  /**
   * Run one turn and return the final answer text. When the turn ended with a
   * clarification question, the question text is returned.
   */
  async chat(message: string, options: ClientRunOptions = {}): Promise<string> {
    return chatAnswer(this.stream(message, options));
  }

  /**
   * Recent threads as `POST /api/threads/search` lists them: pinned first,
   * then newest; `values` is `{title}` once the thread has a title, else `{}`.
   * Includes threads created through the gateway on the same data dir.
   */
  async listThreads(limit = 10, offset = 0): Promise<ThreadResponse[]> {
    const stores = await this.persistence();
    const rows = await stores.threads.search({ userId: this.userId, limit, offset });
    return rows.map(threadSummaryResponse);
  }

  /** One thread with its full state as `values` (gateway `GET /api/threads/{id}` shape). */
  async getThread(threadId: string): Promise<ThreadResponse> {
    assertThreadId(threadId);
    const stores = await this.persistence();
    const row = await stores.threads.get(threadId);
    // another user's thread is unknown here as on the gateway (the data dir can be the gateway's)
    if (row && row.userId !== this.userId) throw threadNotFound(threadId);
    const snap = await (await this.runtime()).readState(threadId);
    const response = threadDetailResponse(threadId, row, snap, this.userId);
    if (!response) throw threadNotFound(threadId);
    return response;
  }

  /** The final messages of a thread (empty when unknown). */
  async getMessages(threadId: string): Promise<Message[]> {
    const row = await (await this.persistence()).threads.get(threadId);
    if (row && row.userId !== this.userId) return [];
    return (await (await this.runtime()).readState(threadId))?.values.messages ?? [];
  }

  /** Delete a thread: checkpoints, records, transcript and files (404-style error for an unknown or foreign thread). */
  async deleteThread(threadId: string): Promise<void> {
    assertThreadId(threadId);
    const stores = await this.persistence();
    const row = await stores.threads.get(threadId);
    if (!row || row.userId !== this.userId) throw threadNotFound(threadId);
    await (await this.runtime()).deleteThread(threadId, this.userId);
  }

  private uploads(): UploadManager {
    const u = this.appConfig?.uploads;
    return new UploadManager(u ? { max_files: u.max_files, max_file_size: u.max_file_size, max_total_size: u.max_total_size } : {});
  }

  /** Upload host files into the thread's uploads directory (gateway upload response shape). */
  async uploadFiles(threadId: string, filePaths: readonly string[]): Promise<UploadResponse> {
    const paths = this.threadPaths(threadId);
    // like the gateway, uploading does not create the thread
    return this.uploads().save(
      paths,
      filePaths.map((p) => ({ filename: path.basename(p), sourcePath: path.resolve(p) })),
    );
  }

  /** List the thread's uploads (`{files, count}`). */
  async listUploads(threadId: string): Promise<UploadListResponse> {
    return this.uploads().list(this.threadPaths(threadId));
  }

  /** Delete one upload (`{success, message}`). */
  async deleteUpload(threadId: string, filename: string): Promise<UploadDeleteResponse> {
    return this.uploads().delete(this.threadPaths(threadId), filename);
  }

  /** Read an artifact by virtual path (`/mnt/user-data/outputs/x.md`). */
  async getArtifact(threadId: string, virtualPath: string): Promise<ClientArtifact> {
    const a = await readArtifact(this.threadPaths(threadId), virtualPath);
    return { bytes: a.bytes, mimeType: a.mimeType };
  }

  // ── Memory (DeerFlow's get/export/import/reload/clear, fact CRUD, config/status; same shapes as /api/memory) ──

  private async memoryScope(agentName?: string | null) {
    return { service: memoryOf(await this.runtime()), scope: { userId: this.userId, agentName: agentName ?? null } };
  }

  /** The user's memory document. */
  async getMemory(agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.getMemory(scope);
  }

  /** Export the memory document (for backup or transfer). */
  async exportMemory(agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.exportMemory(scope);
  }

  /** Replace the memory with an exported document. */
  async importMemory(data: unknown, agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.importMemory(scope, data);
  }

  /** Re-read memory.json (after an external edit). */
  async reloadMemory(agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.reloadMemory(scope);
  }

  /** Forget everything remembered about the user. */
  async clearMemory(agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.clearMemory(scope);
  }

  /** Add a fact by hand; returns the updated document. */
  async createMemoryFact(content: string, category = "context", confidence = 0.5, agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return (await service.createFact(scope, { content, category, confidence })).memory;
  }

  /** Change a fact (omitted fields keep their values). */
  async updateMemoryFact(factId: string, patch: { content?: string; category?: string; confidence?: number }, agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.updateFact(scope, factId, patch);
  }

  /** Delete a fact. */
  async deleteMemoryFact(factId: string, agentName?: string | null): Promise<MemoryDocument> {
    const { service, scope } = await this.memoryScope(agentName);
    return service.deleteFact(scope, factId);
  }

  /** The memory settings (`GET /api/memory/config` shape). */
  async getMemoryConfig(): Promise<MemoryStatusResponse["config"]> {
    return memoryOf(await this.runtime()).configResponse();
  }

  /** Config and data together (`GET /api/memory/status` shape). */
  async getMemoryStatus(agentName?: string | null): Promise<MemoryStatusResponse> {
    const { service, scope } = await this.memoryScope(agentName);
    return { config: service.configResponse(), data: service.getMemory(scope) };
  }

  /** DeerFlow's `get_mcp_config()`: the MCP servers with secrets masked (gateway `GET /api/mcp/config` shape). */
  async getMcpConfig(): Promise<McpConfigResponse> {
    return readMcpConfig(await this.runtime());
  }

  /** DeerFlow's `update_mcp_config()`: replace the MCP servers; the next run loads them (trusted: no launch validation). */
  async updateMcpConfig(servers: Record<string, Record<string, unknown>>): Promise<McpConfigResponse> {
    return updateMcpConfig(await this.runtime(), servers);
  }

  /** Per-server MCP status (gateway `GET /api/mcp/status` shape), after servers still loading settled. */
  async getMcpStatus(): Promise<{ servers: McpServerStatus[] }> {
    const pool = (await this.runtime()).extensions.mcp;
    await pool?.ready();
    return { servers: pool?.status() ?? [] };
  }

  /** Configured models (gateway `GET /api/models` shape). */
  listModels(): ModelsResponse {
    const cfg = this.appConfig;
    return cfg ? buildModelsResponse(cfg) : { models: [], token_usage: { enabled: true } };
  }

  /** Close the runtime this client opened itself (a runtime passed in is left open: its owner closes it). */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    this.legacyImported = undefined;
    if (opening) await (await opening.catch(() => undefined))?.close();
  }
}

/**
 * What `chat()` answers for a turn's events (the embedded and the remote
 * client alike): the text of the last AI message with text, or the question
 * of an `ask_clarification` that came after it.
 */
export async function chatAnswer(events: AsyncIterable<ClientStreamEvent>): Promise<string> {
  const texts = new Map<string, string>();
  let order: string[] = [];
  let clarification: string | undefined;
  for await (const ev of events) {
    if (ev.type !== "messages-tuple") continue;
    const d = ev.data as { type?: string; id?: string; content?: unknown; name?: string };
    if (d.type === "ai" && typeof d.id === "string" && typeof d.content === "string" && d.content) {
      if (!texts.has(d.id)) order = [...order, d.id];
      texts.set(d.id, (texts.get(d.id) ?? "") + d.content);
      clarification = undefined;
    } else if (d.type === "tool" && d.name === "ask_clarification") {
      clarification = typeof d.content === "string" ? d.content : "";
    }
  }
  if (clarification !== undefined) return clarification;
  return order.length ? texts.get(order[order.length - 1])! : "";
}
