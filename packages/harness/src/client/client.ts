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
import { assertThreadId } from "../runtime";
import type { Agent } from "../runtime";
import { DEFAULT_LOCAL_USER, readArtifact, threadPaths, UploadError, UploadManager } from "../uploads";
import type { ThreadPaths, UploadDeleteResponse, UploadListResponse, UploadResponse } from "../uploads";
import { basicAgentFactory } from "./default-agent-factory";
import { buildModelsResponse, buildThreadResponse, toJsonSafe } from "./gateway-shapes";
import type { ModelsResponse, ThreadResponse } from "./gateway-shapes";
import { ClientStreamTranslator } from "./stream-translator";
import { ThreadIndex } from "./thread-index";
import type { AgentFactory, ClientRunOptions, ClientRuntimeConfig, ClientStreamEvent, DeerFlowClientOptions } from "./types";

/** The answer of {@link DeerFlowClient.getArtifact}. */
export interface ClientArtifact {
  bytes: Buffer;
  mimeType: string;
}

/**
 * DeerFlow without a server: runs the agent in-process, keeps threads in the
 * configured checkpointer and thread files under `{dataDir}/users/…`, and
 * answers with the same JSON shapes as the gateway.
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
  private readonly threads: ThreadIndex;

  constructor(options: DeerFlowClientOptions = {}) {
    this.options = options;
    const cwd = options.cwd ?? process.cwd();
    this.dataDir = path.resolve(cwd, options.dataDir ?? ".deer-flow");
    this.userId = options.userId ?? DEFAULT_LOCAL_USER;
    this.factory = options.agentFactory ?? basicAgentFactory;
    this.store = options.checkpointer;
    if (options.appConfig) {
      this.config = options.appConfig;
      this.configLoaded = true;
    }
    this.threads = new ThreadIndex(path.join(this.dataDir, "data", "client-threads.json"));
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

  private checkpointer(): CheckpointStore | Checkpointer {
    if (!this.store) {
      const backend = this.appConfig?.database?.backend ?? "sqlite";
      if (backend === "memory") this.store = new MemoryCheckpointStore();
      else if (backend === "sqlite") {
        const dbDir = path.join(this.dataDir, "data");
        // better-sqlite3 creates the file but not its directory
        mkdirSync(dbDir, { recursive: true });
        this.store = new SqliteCheckpointStore(path.join(dbDir, "deerflow.db"));
      } else {
        throw new ConfigError(`database.backend '${backend}' is not supported by the embedded client; use sqlite or memory.`, {
          details: { key: "database.backend" },
        });
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
    this.threads.upsert(threadId, { status: "running" });
    const input = humanMessage(message, { additional_kwargs: { ...(options.additionalKwargs ?? {}), run_id: runId } });
    const context = {
      thread_id: threadId,
      run_id: runId,
      user_id: this.userId,
      ...rc,
      ...(rc.agent_name ? { agent_name: rc.agent_name } : {}),
      ...(options.context ?? {}),
    };
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
    const result = await run.result;
    const title = typeof result.state.title === "string" ? result.state.title : null;
    const status = result.status === "success" ? "idle" : result.status === "cancelled" ? "interrupted" : result.status;
    this.threads.upsert(threadId, { status, ...(title ? { title } : {}) });
    if (result.status === "error") {
      const err = result.error ?? new DeerFlowError("run_failed", "The run failed");
      throw err;
    }
    yield { type: "end", data: { usage: { ...translator.usage }, thread_id: threadId, run_id: runId, status: result.status } };
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

  /** Recent threads, newest first, as gateway ThreadResponse objects (`values` = `{title}`). */
  async listThreads(limit = 10): Promise<ThreadResponse[]> {
    return this.threads.list(limit).map((t) =>
      buildThreadResponse({
        threadId: t.thread_id,
        status: t.status,
        createdAt: t.created_at,
        updatedAt: t.updated_at,
        metadata: t.metadata,
        values: { title: t.title ?? "" },
      }),
    );
  }

  /** One thread with its full state as `values` (gateway `GET /api/threads/{id}` shape). */
  async getThread(threadId: string): Promise<ThreadResponse> {
    assertThreadId(threadId);
    const agent = await this.getAgent();
    const snap = await agent.getState(threadId);
    const entry = this.threads.get(threadId);
    if (!snap && !entry) throw new UploadError("thread_not_found", `Thread ${threadId} not found`, 404, { details: { thread_id: threadId } });
    const status = snap?.interrupts.length ? "interrupted" : (entry?.status ?? "idle");
    return buildThreadResponse({
      threadId,
      status,
      createdAt: entry?.created_at ?? snap?.createdAt ?? new Date().toISOString(),
      updatedAt: entry?.updated_at ?? snap?.createdAt ?? new Date().toISOString(),
      metadata: entry?.metadata ?? {},
      values: snap ? toJsonSafe(snap.values as Record<string, unknown>) : {},
    });
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
    const result = await this.uploads().save(
      paths,
      filePaths.map((p) => ({ filename: path.basename(p), sourcePath: path.resolve(p) })),
    );
    if (!this.threads.get(threadId)) this.threads.upsert(threadId, {});
    return result;
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

  /** Release the checkpointer the client opened itself. */
  async close(): Promise<void> {
    if (this.ownsStore && this.store && "close" in this.store && typeof this.store.close === "function") await this.store.close();
    this.store = undefined;
    this.ownsStore = false;
    this.resetAgent();
  }
}
