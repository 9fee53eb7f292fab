import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { MemoryCheckpointStore, SqliteCheckpointStore } from "../checkpoints";
import type { Checkpointer, CheckpointStore } from "../checkpoints";
import { loadAppConfig, silentConfigLogger } from "../config";
import type { AppConfig } from "../config";
import { ConfigError, DeerFlowError } from "../errors";
import { humanMessage } from "../messages";
import type { Message } from "../messages";
import { createMemoryStores, emptyUsage, messagesChangedByRun, openSqliteStores, persistenceDbPath, runUsageFromMessages } from "../persistence";
import type { PersistenceStores, RunRecordStatus } from "../persistence";
import { assertThreadId, isAbortError } from "../runtime";
import type { Agent, RunResult } from "../runtime";
import { DEFAULT_LOCAL_USER, readArtifact, threadPaths, UploadError, UploadManager } from "../uploads";
import type { ThreadPaths, UploadDeleteResponse, UploadListResponse, UploadResponse } from "../uploads";
import { leadAgentFactory } from "./lead-agent-factory";
import { buildModelsResponse, threadDetailResponse, threadSummaryResponse, toJsonSafe } from "./gateway-shapes";
import type { ModelsResponse, ThreadResponse } from "./gateway-shapes";
import { importLegacyThreadIndex } from "./legacy-thread-index";
import { ClientStreamTranslator } from "./stream-translator";
import type { AgentFactory, ClientRunOptions, ClientRuntimeConfig, ClientStreamEvent, DeerFlowClientOptions } from "./types";

/** The answer of {@link DeerFlowClient.getArtifact}. */
export interface ClientArtifact {
  bytes: Buffer;
  mimeType: string;
}

function now(): string {
  return new Date().toISOString();
}

function threadNotFound(threadId: string): UploadError {
  return new UploadError("thread_not_found", `Thread ${threadId} not found`, 404, { details: { thread_id: threadId } });
}

/**
 * DeerFlow without a server: runs the agent in-process, keeps threads in the
 * configured checkpointer, thread metadata, run records and transcripts in
 * the same stores as the gateway (`{dataDir}/gateway.db`), thread files under
 * `{dataDir}/users/…`, and answers with the gateway's JSON shapes, built by
 * the same functions.
 */
export class DeerFlowClient {
  readonly dataDir: string;
  readonly userId: string;
  private readonly options: DeerFlowClientOptions;
  private readonly factory: AgentFactory;
  private configLoaded = false;
  private config: AppConfig | undefined;
  private store: CheckpointStore | Checkpointer | undefined;
  private ownsStore = false;
  private agent: Agent | undefined;
  private agentKey: string | undefined;
  private storesOpening: Promise<PersistenceStores> | undefined;
  private ownsStores = false;

  constructor(options: DeerFlowClientOptions = {}) {
    this.options = options;
    const cwd = options.cwd ?? process.cwd();
    this.dataDir = path.resolve(cwd, options.dataDir ?? ".deer-flow");
    this.userId = options.userId ?? DEFAULT_LOCAL_USER;
    this.factory = options.agentFactory ?? leadAgentFactory;
    this.store = options.checkpointer;
    if (options.appConfig) {
      this.config = options.appConfig;
      this.configLoaded = true;
    }
  }

  /**
   * The app config (loaded lazily). Without an explicit path, a missing
   * config.yaml is tolerated only when an agent factory was injected.
   */
  get appConfig(): AppConfig | undefined {
    if (!this.configLoaded) {
      this.configLoaded = true;
      try {
        this.config = loadAppConfig({ path: this.options.configPath, cwd: this.options.cwd, logger: silentConfigLogger }).config;
      } catch (err) {
        const notFound = err instanceof ConfigError && err.code === "config_not_found";
        if (!(notFound && !this.options.configPath && this.options.agentFactory)) {
          this.configLoaded = false;
          throw err;
        }
      }
    }
    return this.config;
  }

  private databaseBackend(): string {
    const backend = this.appConfig?.database?.backend ?? "sqlite";
    if (backend !== "memory" && backend !== "sqlite") {
      throw new ConfigError(`database.backend '${backend}' is not supported by the embedded client; use sqlite or memory.`, {
        details: { key: "database.backend" },
      });
    }
    return backend;
  }

  /**
   * Thread metadata, run records and transcripts: `options.stores`, else the
   * gateway's SQLite file `{dataDir}/gateway.db` (in-memory stores with
   * `database.backend: memory`). The old JSON thread index is imported once.
   */
  async persistence(): Promise<PersistenceStores> {
    if (!this.storesOpening) {
      this.storesOpening = (async () => {
        let stores = this.options.stores;
        if (!stores) {
          stores = this.databaseBackend() === "memory" ? createMemoryStores() : openSqliteStores(persistenceDbPath(this.dataDir));
          this.ownsStores = true;
        }
        await importLegacyThreadIndex(this.dataDir, stores.threads, this.userId);
        return stores;
      })();
      this.storesOpening.catch(() => (this.storesOpening = undefined));
    }
    return this.storesOpening;
  }

  private checkpointer(): CheckpointStore | Checkpointer {
    if (!this.store) {
      const backend = this.databaseBackend();
      if (backend === "memory") this.store = new MemoryCheckpointStore();
      else {
        const dbDir = path.join(this.dataDir, "data");
        // better-sqlite3 creates the file but not its directory
        mkdirSync(dbDir, { recursive: true });
        this.store = new SqliteCheckpointStore(path.join(dbDir, "deerflow.db"));
      }
      this.ownsStore = true;
    }
    return this.store;
  }

  private runtimeConfig(overrides: ClientRunOptions = {}): ClientRuntimeConfig {
    return {
      model_name: overrides.modelName ?? this.options.modelName,
      thinking_enabled: overrides.thinkingEnabled ?? this.options.thinkingEnabled ?? true,
      is_plan_mode: overrides.planMode ?? this.options.planMode ?? false,
      subagent_enabled: overrides.subagentEnabled ?? this.options.subagentEnabled ?? false,
      agent_name: this.options.agentName,
    };
  }

  /** Build (or reuse) the agent for a runtime config. */
  async getAgent(overrides: ClientRunOptions = {}): Promise<Agent> {
    const rc = this.runtimeConfig(overrides);
    const key = JSON.stringify([rc, this.userId]);
    if (this.agent && this.agentKey === key) return this.agent;
    this.agent = await this.factory({
      appConfig: this.appConfig,
      runtimeConfig: rc,
      checkpointer: this.checkpointer(),
      dataDir: this.dataDir,
      userId: this.userId,
    });
    this.agentKey = key;
    return this.agent;
  }

  /** Drop the cached agent (the next run rebuilds it). */
  resetAgent(): void {
    this.agent = undefined;
    this.agentKey = undefined;
  }

  /** Host paths of a thread's data. */
  threadPaths(threadId: string): ThreadPaths {
    return threadPaths(this.dataDir, this.userId, threadId);
  }

  /**
   * Run one turn and stream typed events: `values` snapshots, `messages-tuple`
   * AI text deltas / tool calls / tool results (each once), `custom`, and a
   * final `end` with the turn's cumulative usage. A failed run throws after
   * the events it produced.
   */
  async *stream(message: string, options: ClientRunOptions = {}): AsyncGenerator<ClientStreamEvent> {
    const threadId = options.threadId ?? randomUUID();
    assertThreadId(threadId);
    const agent = await this.getAgent(options);
    const before = await agent.getState(threadId);
    const historical = new Set((before?.values.messages ?? []).map((m) => m.id).filter((id): id is string => !!id));
    const runId = randomUUID();
    const translator = new ClientStreamTranslator(historical);
    const rc = this.runtimeConfig(options);
    const stores = await this.persistence();
    const startedAt = now();
    const row = await stores.threads.get(threadId);
    if (row && row.userId !== this.userId) throw threadNotFound(threadId);
    if (row) await stores.threads.update(threadId, { status: "running", updatedAt: startedAt });
    else await stores.threads.create({ threadId, userId: this.userId, status: "running", metadata: {}, displayName: null, createdAt: startedAt, updatedAt: startedAt });
    const input = humanMessage(message, { additional_kwargs: { ...(options.additionalKwargs ?? {}), run_id: runId } });
    const context: Record<string, unknown> = {
      thread_id: threadId,
      run_id: runId,
      user_id: this.userId,
      ...rc,
      ...(rc.agent_name ? { agent_name: rc.agent_name } : {}),
      ...(options.context ?? {}),
    };
    await stores.runs.create({
      runId,
      threadId,
      userId: this.userId,
      assistantId: rc.agent_name ?? "lead_agent",
      status: "running",
      metadata: {},
      kwargs: toJsonSafe({ input: { messages: [input] }, config: { configurable: rc }, context: options.context ?? {} }),
      multitaskStrategy: "reject",
      createdAt: startedAt,
      updatedAt: startedAt,
      usage: emptyUsage(),
      stopReason: null,
      error: null,
      modelName: rc.model_name ?? null,
    });
    let result: RunResult | undefined;
    let failure: unknown;
    try {
      const run = agent.stream(
        { messages: [input] },
        {
          threadId,
          runId,
          context,
          configurable: { ...rc, thread_id: threadId },
          streamMode: ["values", "messages", "custom"],
          signal: options.signal,
          recursionLimit: options.recursionLimit,
        },
      );
      for await (const event of run) {
        for (const out of translator.translate(event)) yield out;
      }
      result = await run.result;
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      // also runs when the consumer stops iterating early (recorded as interrupted)
      await this.recordRunEnd(stores, agent, { threadId, runId, historical, context }, result, failure);
    }
    if (!result) return;
    if (result.status === "error") {
      const err = result.error ?? new DeerFlowError("run_failed", "The run failed");
      throw err;
    }
    yield { type: "end", data: { usage: { ...translator.usage }, thread_id: threadId, run_id: runId, status: result.status } };
  }

  /** Store the run's outcome the way the gateway's run manager does (run record, transcript, thread status and title). */
  private async recordRunEnd(
    stores: PersistenceStores,
    agent: Agent,
    run: { threadId: string; runId: string; historical: Set<string>; context: Record<string, unknown> },
    result: RunResult | undefined,
    failure: unknown,
  ): Promise<void> {
    let status: RunRecordStatus;
    let error: string | null = null;
    if (result) {
      status = result.status === "success" ? "success" : result.status === "error" ? "error" : "interrupted";
      if (status === "error") error = result.error?.message ?? "Run failed";
    } else if (failure !== undefined) {
      status = isAbortError(failure) ? "interrupted" : "error";
      if (status === "error") error = failure instanceof Error ? failure.message : String(failure);
    } else {
      status = "interrupted";
    }
    const ts = now();
    let usage = emptyUsage();
    let title: string | undefined;
    try {
      const values = (result?.state ?? (await agent.getState(run.threadId))?.values) as Record<string, unknown> | undefined;
      const messages = (values?.messages ?? []) as Message[];
      usage = runUsageFromMessages(messages, run.historical, run.context);
      // Only what this run added or replaced goes to the transcript. Without a result, fall back to the ids the
      // thread did not have before.
      const touched =
        result && result.startCheckpointId !== undefined
          ? messagesChangedByRun(messages, (result.startState?.messages ?? []) as Message[])
          : messages.filter((m) => !(m.id && run.historical.has(m.id)));
      if (touched.length) await stores.messages.record(run.threadId, run.runId, toJsonSafe(touched) as unknown as Array<Record<string, unknown>>, ts);
      if (typeof values?.title === "string" && values.title) title = values.title;
    } catch {
      // bookkeeping must not hide the run's own outcome
    }
    await stores.runs.update(run.runId, { status, error, usage, updatedAt: ts });
    await stores.threads.update(run.threadId, { status: status === "success" ? "idle" : status, updatedAt: ts, ...(title ? { displayName: title } : {}) });
  }

  /**
   * Run one turn and return the final answer text. When the turn ended with a
   * clarification question, the question text is returned.
   */
  async chat(message: string, options: ClientRunOptions = {}): Promise<string> {
    const texts = new Map<string, string>();
    let order: string[] = [];
    let clarification: string | undefined;
    for await (const ev of this.stream(message, options)) {
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
    const owned = row && row.userId === this.userId ? row : undefined;
    const agent = await this.getAgent();
    const snap = await agent.getState(threadId);
    const response = threadDetailResponse(threadId, owned, snap, this.userId);
    if (!response) throw threadNotFound(threadId);
    return response;
  }

  /** The final messages of a thread (empty when unknown). */
  async getMessages(threadId: string): Promise<Message[]> {
    const agent = await this.getAgent();
    return (await agent.getState(threadId))?.values.messages ?? [];
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

  /** Configured models (gateway `GET /api/models` shape). */
  listModels(): ModelsResponse {
    const cfg = this.appConfig;
    return cfg ? buildModelsResponse(cfg) : { models: [], token_usage: { enabled: true } };
  }

  /** Release the checkpointer and stores the client opened itself. */
  async close(): Promise<void> {
    if (this.ownsStore && this.store && "close" in this.store && typeof this.store.close === "function") await this.store.close();
    this.store = undefined;
    this.ownsStore = false;
    const opening = this.storesOpening;
    this.storesOpening = undefined;
    if (opening && this.ownsStores) await (await opening.catch(() => undefined))?.close();
    this.ownsStores = false;
    this.resetAgent();
  }
}
