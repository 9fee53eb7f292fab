import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import type { Readable, Writable } from "node:stream";
import type { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

type StdioSdk = typeof import("@modelcontextprotocol/sdk/shared/stdio.js");
let stdioSdk: Promise<StdioSdk> | undefined;
/**
 * The SDK's line framing (and the JSON-RPC schemas it validates with), loaded
 * when the first stdio session starts: a gateway whose config enables no MCP
 * server never loads the SDK.
 */
function loadStdioSdk(): Promise<StdioSdk> {
  stdioSdk ??= import("@modelcontextprotocol/sdk/shared/stdio.js");
  return stdioSdk;
}

/** Exactly what to start: no environment is added, no PATH lookup is made. */
export interface LaunchedProcessSpec {
  /** Absolute executable, then its arguments. */
  argv: string[];
  /** The complete environment of the process. */
  env: Record<string, string>;
  cwd: string;
  /** Written to the child's fd 3 and closed (bubblewrap's `--args 3`). */
  fd3?: Buffer;
  /** Called once when the process is gone (session temp dirs). */
  onExit?: () => void;
}

/** Grace period between closing stdin and SIGTERM, then SIGTERM and SIGKILL (as the SDK's stdio transport). */
const CLOSE_GRACE_MS = 2000;

/**
 * An MCP client transport over a child's stdin/stdout, like the SDK's
 * `StdioClientTransport` but started exactly as specified: that one merges
 * `HOME`, `USER`, `PATH`, `SHELL`, … of the gateway's own environment into
 * every server and resolves the command on the gateway's PATH, so a server
 * would never get the clean environment its launch plan built.
 */
export class LaunchedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  private sdk?: StdioSdk;
  private readBuffer?: ReadBuffer;
  private readonly stderrStream = new PassThrough();
  private exited = false;

  constructor(private readonly spec: LaunchedProcessSpec) {}

  /** The child's stderr (available before `start`). */
  get stderr(): PassThrough {
    return this.stderrStream;
  }

  /** The pid of the started process (the outermost launcher when sandboxed). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child || this.sdk) throw new Error("LaunchedStdioTransport already started");
    const sdk = (this.sdk = await loadStdioSdk());
    const readBuffer = (this.readBuffer = new sdk.ReadBuffer());
    const [file, ...args] = this.spec.argv;
    return new Promise((resolve, reject) => {
      const child = spawn(file, args, {
        env: this.spec.env,
        cwd: this.spec.cwd,
        stdio: this.spec.fd3 ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
        shell: false,
      });
      this.child = child;
      child.on("error", (err) => {
        if (child.pid === undefined) this.markExited();
        reject(err);
        this.onerror?.(err);
      });
      child.on("spawn", () => {
        if (this.spec.fd3) (child.stdio[3] as Writable).end(this.spec.fd3);
        resolve();
      });
      child.on("close", () => {
        this.markExited();
        this.child = undefined;
        this.onclose?.();
      });
      if (this.spec.fd3) (child.stdio[3] as Writable).on("error", () => undefined);
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          readBuffer.append(chunk);
        } catch {
          // The read buffer refuses a line past its bound (and throws): inside this listener that would be an
          // uncaught exception ending the whole gateway. The session ends instead; the server is restarted on use.
          this.onerror?.(new Error(`MCP server wrote a message larger than ${sdk.STDIO_DEFAULT_MAX_BUFFER_SIZE / (1024 * 1024)} MiB without a line break; session closed`));
          child.stdout?.removeAllListeners("data");
          child.kill("SIGKILL");
          return;
        }
        this.drain();
      });
      child.stdout?.on("error", (err) => this.onerror?.(err));
      (child.stderr as Readable | null)?.pipe(this.stderrStream);
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer?.readMessage() ?? null;
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private markExited(): void {
    if (this.exited) return;
    this.exited = true;
    try {
      this.spec.onExit?.();
    } catch {
      // a temp dir that cannot be removed is left behind; the session is over either way
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || !this.sdk) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(this.sdk.serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** End stdin, then SIGTERM and SIGKILL if the server does not exit within the grace period. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const within = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
      try {
        child.stdin?.end();
      } catch {
        // already closed
      }
      if (!(await within(CLOSE_GRACE_MS))) {
        child.kill("SIGTERM");
        if (!(await within(CLOSE_GRACE_MS))) child.kill("SIGKILL");
      }
    }
    this.readBuffer?.clear();
  }
}
