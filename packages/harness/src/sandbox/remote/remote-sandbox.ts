import { randomBytes } from "node:crypto";
import type { z } from "zod";
import { linkSignals } from "../../abort";
import { SandboxError } from "../../errors";
import type {
  DirEntry,
  ExecuteOptions,
  ExecuteResult,
  FileStat,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  LimitedResult,
  Sandbox,
  WriteOptions,
} from "../types";
import { callJson, RemoteCallAborted } from "./http";
import {
  execResponseSchema,
  fileGlobResponseSchema,
  fileGrepResponseSchema,
  fileListResponseSchema,
  fileReadResponseSchema,
  fileStatResponseSchema,
  MAX_REMOTE_FILE_BYTES,
  SANDBOX_TOKEN_HEADER,
} from "./wire";

/** Where a remote sandbox's command API is and the token it accepts. */
export interface RemoteEndpoint {
  sandboxUrl: string;
  token: string;
}

/** What a {@link RemoteSandbox} needs. */
export interface RemoteSandboxInit {
  /** Harness-side id (`remote:{user}:{thread}`). */
  id: string;
  /** The provisioner's id of this sandbox. */
  sandboxId: string;
  endpoint: RemoteEndpoint;
  /**
   * Ask the provisioner again (its create is idempotent): called once when the
   * command API refuses the token or no longer knows the sandbox, e.g. after
   * the provisioner restarted or the sandbox died; the call is then retried.
   */
  reconnect(): Promise<RemoteEndpoint>;
  defaultTimeoutMs: number;
  /** Extra environment for every command (`sandbox.environment`). */
  environment?: Record<string, string>;
}

/** How long past the command's own timeout the client waits for the answer (the serving side kills it first). */
const EXEC_ANSWER_GRACE_MS = 30_000;
const FILE_CALL_TIMEOUT_MS = 120_000;

/** Failures that happened before the call did anything, so retrying after a reconnect is safe. */
function isReconnectable(err: unknown): boolean {
  if (!(err instanceof SandboxError)) return false;
  if (err.code === "remote_unauthorized" || err.code === "sandbox_not_found") return true;
  return err.code === "remote_unreachable" && err.details.cause === "ECONNREFUSED";
}

/**
 * A sandbox whose commands and files live behind a provisioner's command API
 * (a container or Pod). Paths are virtual and checked by the serving side;
 * `maskPaths` is the identity. Every call carries the sandbox's own token
 * (never logged); a refused token or a vanished sandbox triggers one
 * reconnect through the provisioner, then the call is retried.
 */
export class RemoteSandbox implements Sandbox {
  readonly id: string;
  readonly kind = "remote";
  readonly isolated = true;
  readonly sandboxId: string;
  private endpoint: RemoteEndpoint;
  private reconnecting?: Promise<RemoteEndpoint>;
  /** Aborted on dispose: cancels every call in flight. */
  private readonly lifetime = new AbortController();

  constructor(private readonly init: RemoteSandboxInit) {
    this.id = init.id;
    this.sandboxId = init.sandboxId;
    this.endpoint = init.endpoint;
  }

  /** The command API's base URL (no credentials in it). */
  get sandboxUrl(): string {
    return this.endpoint.sandboxUrl;
  }

  /** Cancel calls in flight; the sandbox must not be used afterwards. */
  dispose(): void {
    this.lifetime.abort(new Error("sandbox released"));
  }

  private async reconnect(stale: RemoteEndpoint): Promise<void> {
    if (this.endpoint !== stale) return;
    this.reconnecting ??= this.init.reconnect().finally(() => {
      this.reconnecting = undefined;
    });
    this.endpoint = await this.reconnecting;
  }

  private async call<T extends z.ZodType>(
    method: "GET" | "POST",
    route: string,
    body: unknown,
    schema: T,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<z.output<T>> {
    if (this.lifetime.signal.aborted) throw new SandboxError(`Sandbox ${this.id} was released`, { code: "sandbox_released" });
    const linked = linkSignals([options.signal, this.lifetime.signal]);
    try {
      for (let attempt = 0; ; attempt++) {
        const endpoint = this.endpoint;
        try {
          const res = await callJson({
            method,
            url: `${endpoint.sandboxUrl}${route}`,
            headers: { [SANDBOX_TOKEN_HEADER]: endpoint.token },
            body,
            schema,
            timeoutMs: options.timeoutMs ?? FILE_CALL_TIMEOUT_MS,
            signal: linked.signal,
            what: `Remote sandbox ${this.sandboxId}`,
          });
          return res as z.output<T>;
        } catch (err) {
          if (attempt > 0 || !isReconnectable(err)) throw err;
          await this.reconnect(endpoint);
        }
      }
    } finally {
      linked.release();
    }
  }

  async executeCommand(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    if (options.signal?.aborted) return { stdout: "", stderr: "Command cancelled before it started", exitCode: -1, timedOut: false, truncated: false };
    const timeoutMs = options.timeoutMs ?? this.init.defaultTimeoutMs;
    const execId = randomBytes(12).toString("base64url");
    const env = { ...(this.init.environment ?? {}), ...(options.env ?? {}) };
    try {
      const res = await this.call(
        "POST",
        "/v1/exec",
        { command, timeout_ms: timeoutMs, env, exec_id: execId },
        execResponseSchema,
        { timeoutMs: timeoutMs + EXEC_ANSWER_GRACE_MS, signal: options.signal },
      );
      return { stdout: res.stdout, stderr: res.stderr, exitCode: res.exit_code, timedOut: res.timed_out, truncated: res.truncated };
    } catch (err) {
      if (!(err instanceof RemoteCallAborted)) throw err;
      // The dropped connection already stops the command on the serving side; the explicit cancel covers a proxy that keeps it open.
      const endpoint = this.endpoint;
      void callJson({
        method: "POST",
        url: `${endpoint.sandboxUrl}/v1/exec/${execId}/cancel`,
        headers: { [SANDBOX_TOKEN_HEADER]: endpoint.token },
        body: {},
        schema: execResponseSchema.partial().passthrough(),
        timeoutMs: 10_000,
        what: `Remote sandbox ${this.sandboxId}`,
      }).catch(() => {});
      return { stdout: "", stderr: "Command cancelled", exitCode: 137, timedOut: false, truncated: false };
    }
  }

  async readFileBytes(path: string): Promise<Uint8Array> {
    const res = await this.call("POST", "/v1/file/read", { path }, fileReadResponseSchema);
    return Buffer.from(res.content_base64, "base64");
  }

  async readFile(path: string): Promise<string> {
    return Buffer.from(await this.readFileBytes(path)).toString("utf8");
  }

  private async write(path: string, bytes: Uint8Array, append: boolean): Promise<void> {
    if (bytes.length > MAX_REMOTE_FILE_BYTES) {
      throw new SandboxError(`File too large for the remote sandbox: ${path} (${bytes.length} bytes, at most ${MAX_REMOTE_FILE_BYTES})`, { code: "file_too_large" });
    }
    await this.call("POST", "/v1/file/write", { path, content_base64: Buffer.from(bytes).toString("base64"), append }, execResponseSchema.partial().passthrough());
  }

  writeFile(path: string, content: string, options: WriteOptions = {}): Promise<void> {
    return this.write(path, Buffer.from(content, "utf8"), options.append === true);
  }

  updateFile(path: string, bytes: Uint8Array): Promise<void> {
    return this.write(path, bytes, false);
  }

  async listDir(path: string, maxDepth = 2): Promise<DirEntry[]> {
    const res = await this.call("POST", "/v1/file/list", { path, max_depth: Math.max(1, Math.min(32, maxDepth)) }, fileListResponseSchema);
    return res.entries.map((e) => ({ path: e.path, isDir: e.is_dir, depth: e.depth }));
  }

  async glob(path: string, pattern: string, options: GlobOptions = {}): Promise<LimitedResult<string>> {
    return this.call(
      "POST",
      "/v1/file/glob",
      { path, pattern, include_dirs: options.includeDirs ?? false, max_results: options.maxResults ?? 200 },
      fileGlobResponseSchema,
    );
  }

  async grep(path: string, pattern: string, options: GrepOptions = {}): Promise<LimitedResult<GrepMatch>> {
    return this.call(
      "POST",
      "/v1/file/grep",
      {
        path,
        pattern,
        ...(options.glob ? { glob: options.glob } : {}),
        literal: options.literal ?? false,
        case_sensitive: options.caseSensitive ?? false,
        max_results: options.maxResults ?? 100,
      },
      fileGrepResponseSchema,
    );
  }

  async stat(path: string): Promise<FileStat | null> {
    const res = await this.call("POST", "/v1/file/stat", { path }, fileStatResponseSchema);
    return res.stat ? { isFile: res.stat.is_file, isDir: res.stat.is_dir, size: res.stat.size, mtimeMs: res.stat.mtime_ms } : null;
  }

  async exists(path: string): Promise<boolean> {
    return (await this.stat(path)) !== null;
  }

  maskPaths(text: string): string {
    return text;
  }
}
