import { randomUUID } from "node:crypto";
import { openAsBlob } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { McpConfigResponse, McpServerStatus } from "../mcp";
import type { MemoryDocument } from "../memory";
import type { Message } from "../messages";
import type { ReasoningEffort } from "../models";
import { assertThreadId } from "../runtime";
import { artifactUrl, guessMimeType, UploadError, uploadDeleteResponseSchema, uploadListResponseSchema, uploadResponseSchema } from "../uploads";
import type { UploadDeleteResponse, UploadListResponse, UploadResponse } from "../uploads";
import { chatAnswer } from "./client";
import type { ClientArtifact } from "./client";
import { modelsResponseSchema, threadResponseSchema } from "./gateway-shapes";
import type { ModelsResponse, ThreadResponse } from "./gateway-shapes";
import type { MemoryStatusResponse } from "./memory";
import { RemoteConnectionError, RemoteHttpError, RemoteRunError } from "./remote-errors";
import { translateRunStream } from "./remote-stream";
import type { RemoteRunOutcome } from "./remote-stream";
import { RemoteTransport } from "./remote-transport";
import type { RemoteTransportOptions } from "./remote-transport";
import { ClientStreamTranslator } from "./stream-translator";
import type { ClientRunOptions, ClientStreamEvent, ClientUsage } from "./types";
import { clientUsageOfRunResponse } from "./usage";

/** Options of `new RemoteDeerFlowClient(...)`: where the server is, the token, and per-client run defaults. */
export interface RemoteDeerFlowClientOptions extends RemoteTransportOptions {
  modelName?: string;
  /** Default: the server's (true). */
  thinkingEnabled?: boolean;
  /** Default false. */
  subagentEnabled?: boolean;
  /** Default false. */
  planMode?: boolean;
  reasoningEffort?: ReasoningEffort;
  /** A custom agent of the signed-in user (sent as `assistant_id`). */
  agentName?: string;
}

/** `GET /api/v1/auth/me`: who the token signs in as. */
export interface RemoteUser {
  id: string;
  email: string;
  system_role: "admin" | "user";
  needs_setup: boolean;
  oauth_provider: string | null;
}

const meSchema = z.looseObject({ id: z.string(), email: z.string(), system_role: z.string() });
const threadListSchema = z.array(threadResponseSchema);
const objectSchema = z.looseObject({});
const mcpStatusSchema = z.looseObject({ servers: z.array(z.looseObject({})) });
const runStatusSchema = z.looseObject({ status: z.string(), error: z.string().nullable().optional() });
/** Run statuses that mean the run failed (the embedded client throws for these too). */
const FAILED = new Set(["error", "timeout"]);

/** `/api/threads/{id}` with the id checked first (the same rule as the embedded client and the gateway). */
function threadPath(threadId: string, rest = ""): string {
  assertThreadId(threadId);
  return `/api/threads/${threadId}${rest}`;
}

/** The run id of a `Content-Location: /api/threads/{t}/runs/{r}` header. */
function runIdFromLocation(location: string | null): string | undefined {
  const m = location ? /\/runs\/([^/?#]+)$/.exec(location) : null;
  return m ? decodeURIComponent(m[1]) : undefined;
}

/**
 * {@link DeerFlowClient}'s counterpart for a DeerFlow server on another
 * machine (or another process): the same method names, arguments and
 * results, over the gateway's HTTP API, authenticated with a personal
 * access token (`Authorization: Bearer dfp_…`). `stream()` reads
 * `POST /api/threads/{id}/runs/stream` and yields the embedded client's
 * {@link ClientStreamEvent}s, translated by the same code. Threads, files
 * and memory are the token owner's on the server; `files` passed to a run
 * are read from this machine and uploaded. Failures are typed:
 * {@link RemoteHttpError} (with `status` and the server's `detail`),
 * {@link RemoteAuthError} for 401/403, {@link RemoteConnectionError},
 * {@link RemoteTimeoutError}, {@link RemoteRunError}.
 */
export class RemoteDeerFlowClient {
  /** The server's root URL (normalised). */
  readonly baseUrl: string;
  private readonly http: RemoteTransport;
  private readonly options: RemoteDeerFlowClientOptions;

  constructor(options: RemoteDeerFlowClientOptions) {
    this.http = new RemoteTransport(options);
    this.baseUrl = this.http.baseUrl.href.replace(/\/$/, "");
    this.options = options;
  }

  /** The run request body DeerFlow's web UI sends, from this client's defaults and the call's overrides. */
  private runBody(message: string, kwargs: Record<string, unknown>, o: ClientRunOptions): Record<string, unknown> {
    const d = this.options;
    const context: Record<string, unknown> = {
      ...(o.context ?? {}),
      model_name: o.modelName ?? d.modelName,
      thinking_enabled: o.thinkingEnabled ?? d.thinkingEnabled,
      reasoning_effort: o.reasoningEffort ?? d.reasoningEffort,
      is_plan_mode: o.planMode ?? d.planMode ?? false,
      subagent_enabled: o.subagentEnabled ?? d.subagentEnabled ?? false,
    };
    return {
      assistant_id: d.agentName ?? "lead_agent",
      input: { messages: [{ type: "human", content: message, additional_kwargs: kwargs }] },
      config: o.recursionLimit ? { recursion_limit: o.recursionLimit } : {},
      context: Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined)),
      stream_mode: ["values", "messages-tuple", "custom"],
      // Like the embedded client, a consumer that stops listening stops the run.
      on_disconnect: "cancel",
    };
  }

  /**
   * Run one turn on the server and stream the embedded client's events:
   * `values` snapshots, `messages-tuple` AI text deltas / tool calls / tool
   * results (each once), `custom`, and a final `end` with the turn's usage,
   * thread id, run id and the run's stored status. The thread is created
   * on the server when it does not exist. `files` (paths on this machine)
   * are uploaded first and attached to the message. A failed run throws a
   * {@link RemoteRunError} after the events it produced; `signal`, or
   * stopping the iteration, disconnects and the server interrupts the run.
   */
  async *stream(message: string, options: ClientRunOptions = {}): AsyncGenerator<ClientStreamEvent> {
    const threadId = options.threadId ?? randomUUID();
    assertThreadId(threadId);
    const signal = options.signal;
    // Idempotent: answers the existing thread of this user, creates it otherwise (the run routes need the row).
    await this.http.json("POST", "/api/threads", { json: { thread_id: threadId, metadata: {} }, signal }, threadResponseSchema);
    // Earlier turns' messages are never emitted again (the embedded client reads them from its checkpointer).
    const historical = new Set<string>();
    if (options.threadId) for (const m of await this.getMessages(threadId, signal)) if (m.id) historical.add(m.id);
    const translator = new ClientStreamTranslator(historical);
    const kwargs: Record<string, unknown> = { ...(options.additionalKwargs ?? {}) };
    if (options.files?.length) {
      const up = await this.uploadFiles(threadId, options.files, signal);
      // The attachment shape the web UI sends: the server's Uploads middleware turns it into the <current_uploads> block.
      if (up.files.length) kwargs.files = up.files.map((f) => ({ filename: f.filename, size: f.size, path: f.virtual_path, status: "uploaded" }));
      yield { type: "custom", data: { type: "uploads", ...up } };
    }
    const { headers, events } = await this.http.stream("POST", threadPath(threadId, "/runs/stream"), { json: this.runBody(message, kwargs, options), signal });
    const outcome: RemoteRunOutcome = { runId: runIdFromLocation(headers.get("content-location")), error: undefined, ended: false };
    yield* translateRunStream(events, translator, outcome);
    if (!outcome.ended) throw new RemoteConnectionError(`The run stream of thread ${threadId} ended before the run finished (the connection was cut)`);
    const runId = outcome.runId;
    if (outcome.error) throw new RemoteRunError(outcome.error.message, { threadId, runId, errorName: outcome.error.name });
    let status = "success";
    let usage: ClientUsage = { ...translator.usage };
    if (runId) {
      const rec = await this.http.json<{ status: string; error?: string | null } & Record<string, unknown>>("GET", threadPath(threadId, `/runs/${encodeURIComponent(runId)}`), { signal }, runStatusSchema);
      status = rec.status;
      if (FAILED.has(status)) throw new RemoteRunError(rec.error ?? `The run ended with status ${status}`, { threadId, runId, status });
      // the run record's totals include sub-agent and middleware calls, which the streamed messages leave out
      usage = clientUsageOfRunResponse(rec) ?? usage;
    }
    yield { type: "end", data: { usage, thread_id: threadId, run_id: runId ?? "", status } };
  }

  /** Run one turn and return the final answer text (or the clarification question it ended with), as the embedded client does. */
  async chat(message: string, options: ClientRunOptions = {}): Promise<string> {
    return chatAnswer(this.stream(message, options));
  }

  /** The token owner's recent threads (`POST /api/threads/search`): pinned first, then newest. */
  async listThreads(limit = 10, offset = 0): Promise<ThreadResponse[]> {
    return this.http.json("POST", "/api/threads/search", { json: { limit, offset } }, threadListSchema);
  }

  /** One thread with its full state as `values` (`GET /api/threads/{id}`). */
  async getThread(threadId: string): Promise<ThreadResponse> {
    return this.http.json("GET", threadPath(threadId), {}, threadResponseSchema);
  }

  /** The final messages of a thread (empty when it is unknown or has no state yet). */
  async getMessages(threadId: string, signal?: AbortSignal): Promise<Message[]> {
    try {
      const state = await this.http.json<{ values?: { messages?: Message[] } }>("GET", threadPath(threadId, "/state"), { signal }, objectSchema);
      return Array.isArray(state.values?.messages) ? state.values.messages : [];
    } catch (err) {
      if (err instanceof RemoteHttpError && err.status === 404) return [];
      throw err;
    }
  }

  /** Delete a thread with its runs, checkpoints and files (a 404 {@link RemoteHttpError} for an unknown or foreign one). */
  async deleteThread(threadId: string): Promise<void> {
    await this.http.json("DELETE", threadPath(threadId), {}, objectSchema);
  }

  /** Upload files of this machine into the thread's uploads (multipart `POST /api/threads/{id}/uploads`). */
  async uploadFiles(threadId: string, filePaths: readonly string[], signal?: AbortSignal): Promise<UploadResponse> {
    const form = new FormData();
    for (const p of filePaths) {
      const abs = path.resolve(p);
      let blob: Blob;
      try {
        // read lazily while the request body is sent, not loaded into memory first
        blob = await openAsBlob(abs);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
        throw new UploadError("upload_source_unreadable", `Cannot read ${abs} to upload it (${code})`, 400, { cause: err, details: { path: abs } });
      }
      form.append("files", blob, path.basename(abs));
    }
    return this.http.json("POST", threadPath(threadId, "/uploads"), { form, signal }, uploadResponseSchema);
  }

  /** The thread's uploads (`{files, count}`). */
  async listUploads(threadId: string): Promise<UploadListResponse> {
    return this.http.json("GET", threadPath(threadId, "/uploads/list"), {}, uploadListResponseSchema);
  }

  /** Delete one upload (`{success, message}`). */
  async deleteUpload(threadId: string, filename: string): Promise<UploadDeleteResponse> {
    return this.http.json("DELETE", threadPath(threadId, `/uploads/${encodeURIComponent(filename)}`), {}, uploadDeleteResponseSchema);
  }

  /**
   * Read an artifact by virtual path (`/mnt/user-data/outputs/x.md`). The
   * MIME type is the file's own, worked out as the embedded client does (the
   * gateway serves text as `text/plain` and active types as downloads).
   */
  async getArtifact(threadId: string, virtualPath: string): Promise<ClientArtifact> {
    assertThreadId(threadId);
    const { bytes } = await this.http.bytes("GET", artifactUrl(threadId, virtualPath));
    return { bytes, mimeType: guessMimeType(virtualPath, bytes.subarray(0, 8192)) };
  }

  // ── Memory (the same operations and shapes as the embedded client; `/api/memory`) ──

  private memory<T>(method: string, rest: string, agentName?: string | null, json?: unknown): Promise<T> {
    return this.http.json<T>(method, `/api/memory${rest}`, { query: { agent_name: agentName ?? undefined }, json }, objectSchema);
  }

  /** The user's memory document. */
  getMemory(agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("GET", "", agentName);
  }

  /** Export the memory document. */
  exportMemory(agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("GET", "/export", agentName);
  }

  /** Replace the memory with an exported document. */
  importMemory(data: unknown, agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("POST", "/import", agentName, data);
  }

  /** Re-read memory.json on the server. */
  reloadMemory(agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("POST", "/reload", agentName);
  }

  /** Forget everything remembered about the user. */
  clearMemory(agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("DELETE", "", agentName);
  }

  /** Add a fact by hand; returns the updated document. */
  createMemoryFact(content: string, category = "context", confidence = 0.5, agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("POST", "/facts", agentName, { content, category, confidence });
  }

  /** Change a fact (omitted fields keep their values). */
  updateMemoryFact(factId: string, patch: { content?: string; category?: string; confidence?: number }, agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("PATCH", `/facts/${encodeURIComponent(factId)}`, agentName, patch);
  }

  /** Delete a fact. */
  deleteMemoryFact(factId: string, agentName?: string | null): Promise<MemoryDocument> {
    return this.memory("DELETE", `/facts/${encodeURIComponent(factId)}`, agentName);
  }

  /** The memory settings (`GET /api/memory/config`). */
  getMemoryConfig(): Promise<MemoryStatusResponse["config"]> {
    return this.memory("GET", "/config");
  }

  /** Config and data together (`GET /api/memory/status`; the server adds `updater` and `user_enabled`). */
  getMemoryStatus(agentName?: string | null): Promise<MemoryStatusResponse> {
    return this.memory("GET", "/status", agentName);
  }

  // ── MCP (admin-only on a server with sign-in: an admin's token with the `admin` scope) ──

  /** The MCP servers with secrets masked (`GET /api/mcp/config`). */
  getMcpConfig(): Promise<McpConfigResponse> {
    return this.http.json("GET", "/api/mcp/config", {}, objectSchema);
  }

  /** Replace the MCP servers (`PUT /api/mcp/config`; the server validates launches and applies its API guard). */
  updateMcpConfig(servers: Record<string, Record<string, unknown>>): Promise<McpConfigResponse> {
    return this.http.json("PUT", "/api/mcp/config", { json: { mcp_servers: servers } }, objectSchema);
  }

  /** Per-server MCP status, after servers still loading settled (`GET /api/mcp/status?wait=true`). */
  getMcpStatus(): Promise<{ servers: McpServerStatus[] }> {
    return this.http.json("GET", "/api/mcp/status", { query: { wait: "true" } }, mcpStatusSchema);
  }

  /** Configured models (`GET /api/models`). Asynchronous here: the embedded client's `listModels()` reads its config synchronously. */
  listModels(): Promise<ModelsResponse> {
    return this.http.json("GET", "/api/models", {}, modelsResponseSchema);
  }

  /** Who the token signs in as (`GET /api/v1/auth/me`; the synthetic `default` admin on a server without sign-in). */
  getCurrentUser(): Promise<RemoteUser> {
    return this.http.json("GET", "/api/v1/auth/me", {}, meSchema);
  }

  /** Abort calls in flight; later calls fail. The server is not affected (runs whose stream was cut are interrupted). */
  async close(): Promise<void> {
    this.http.close();
  }
}
