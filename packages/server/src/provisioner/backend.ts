import type { CreateSandboxRequest, SandboxStatus } from "@deerflow-ts/harness";

/** A sandbox as a backend knows it (state lives in the backend: container labels, Pod annotations). */
export interface BackendSandbox {
  sandboxId: string;
  status: SandboxStatus;
  /** Random per creation; the sandbox's token is derived from it (a sandbox recreated under the same id gets a new token). */
  tokenNonce: string;
  userId?: string;
  threadId?: string;
}

/** Options of {@link ProvisionerBackend.exec}. */
export interface BackendExecOptions {
  timeoutMs: number;
  /** `KEY=value` entries added to the sandbox's environment. */
  env: string[];
  workingDir: string;
  signal?: AbortSignal;
  /** Bytes kept per stream (head + tail). */
  maxOutputBytes: number;
}

/** Result of {@link ProvisionerBackend.exec}. */
export interface BackendExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
  truncated: boolean;
}

/** Options of {@link ProvisionerBackend.execBytes}. */
export interface BytesExecOptions {
  /** Bytes written to the process's stdin (then closed); stdin is empty without it. */
  stdin?: Uint8Array;
  timeoutMs: number;
  /** stdout beyond this many bytes is dropped and `overflow` set (the stream is cut). */
  maxBytes: number;
}

/** Result of {@link ProvisionerBackend.execBytes}. */
export interface BytesExecResult {
  stdout: Buffer;
  /** At most a few KiB (diagnostics). */
  stderr: string;
  /** -1 when the process reported none (cut, timed out). */
  exitCode: number;
  overflow: boolean;
  timedOut: boolean;
}

/**
 * Where sandboxes run: Docker containers or Kubernetes Pods. The provisioner
 * serves every sandbox's command API itself and only needs the backend to
 * create, find, remove and exec into sandboxes, so the image needs no server.
 */
export interface ProvisionerBackend {
  /** `docker` or `kubernetes`. */
  readonly kind: string;
  /** Check the backend is usable (daemon or cluster reachable, image present); throws an actionable error otherwise. */
  start(): Promise<void>;
  /** Create the sandbox, or return it when it already exists (idempotent). */
  create(req: CreateSandboxRequest, tokenNonce: string): Promise<BackendSandbox>;
  get(sandboxId: string): Promise<BackendSandbox | undefined>;
  list(): Promise<BackendSandbox[]>;
  /** Remove the sandbox and everything created for it; false when it did not exist. */
  remove(sandboxId: string): Promise<boolean>;
  /** Run a shell command (the bash tool) with timeout, output caps and cancellation that kill its whole process group. */
  exec(sandboxId: string, command: string, options: BackendExecOptions): Promise<BackendExecResult>;
  /** Run an argv with raw bytes in and out (the file operations). */
  execBytes(sandboxId: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult>;
  /** Release clients; sandboxes are left running (they belong to their callers). */
  close(): Promise<void>;
}
