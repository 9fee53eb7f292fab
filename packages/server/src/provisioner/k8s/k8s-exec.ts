import { randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import type { Exec, V1Status } from "@kubernetes/client-node";
import { EXEC_WRAPPER, SandboxError } from "@deerflow-ts/harness";
import type { BackendExecOptions, BackendExecResult, BytesExecOptions, BytesExecResult } from "../backend";
import { SANDBOX_CONTAINER } from "./manifests";

/** The exit status in a Kubernetes exec's final V1Status (`Success`, or `NonZeroExitCode` with an `ExitCode` cause); -1 when absent. */
export function exitCodeOf(status: V1Status | undefined): number {
  if (!status) return -1;
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const n = Number(cause?.message);
  return Number.isInteger(n) ? n : -1;
}

interface RawExec {
  status?: V1Status;
  /** The socket closed without a status (cut by us, or by the API server). */
  cut: boolean;
}

/**
 * One exec over the API server's WebSocket (channel protocol v5, which can
 * close stdin: `cat > file` needs its EOF). Resolves when the socket closes.
 */
async function rawExec(
  exec: Exec,
  namespace: string,
  pod: string,
  argv: string[],
  io: { stdin?: Uint8Array; onStdout(b: Buffer): boolean | void; onStderr(b: Buffer): void; timeoutMs: number; signal?: AbortSignal; onOpen?(close: () => void): void },
): Promise<RawExec> {
  let status: V1Status | undefined;
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      io.onStdout(chunk);
      cb();
    },
  });
  const stderr = new Writable({
    write(chunk: Buffer, _enc, cb) {
      io.onStderr(chunk);
      cb();
    },
  });
  const stdin = io.stdin !== undefined ? Readable.from([Buffer.from(io.stdin)]) : null;
  let ws;
  try {
    ws = await exec.exec(namespace, pod, SANDBOX_CONTAINER, argv, stdout, stderr, stdin, false, (s) => {
      status = s;
    });
  } catch (err) {
    const code = (err as { statusCode?: number; code?: number }).statusCode ?? (err as { code?: number }).code;
    if (code === 404) throw new SandboxError(`Sandbox Pod ${pod} does not exist`, { code: "kubernetes_pod_missing" });
    throw new SandboxError(`exec in Pod ${pod} failed: ${(err as Error).message}`, { code: "sandbox_exec_failed" });
  }
  const socket = ws;
  const close = () => {
    try {
      socket.close();
    } catch {
      /* already closed */
    }
  };
  io.onOpen?.(close);
  const timer = setTimeout(close, Math.max(1, io.timeoutMs));
  io.signal?.addEventListener("abort", close, { once: true });
  try {
    await new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) resolve();
      socket.once("close", () => resolve());
      socket.once("error", () => resolve());
    });
  } finally {
    clearTimeout(timer);
    io.signal?.removeEventListener("abort", close);
  }
  return { status, cut: status === undefined };
}

/** Keeps the first and last `cap/2` bytes of a stream (as the other tiers do). */
class HeadTail {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer = Buffer.alloc(0);
  dropped = 0;
  constructor(private readonly cap: number) {}
  push(b: Buffer): void {
    const headCap = Math.ceil(this.cap / 2);
    if (this.headLen < headCap) {
      const take = Math.min(headCap - this.headLen, b.length);
      this.head.push(b.subarray(0, take));
      this.headLen += take;
      b = b.subarray(take);
    }
    if (!b.length) return;
    const tailCap = Math.floor(this.cap / 2);
    const all = Buffer.concat([this.tail, b]);
    if (all.length > tailCap) this.dropped += all.length - tailCap;
    this.tail = Buffer.from(all.subarray(Math.max(0, all.length - tailCap)));
  }
  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    if (!this.dropped) return head + this.tail.toString("utf8");
    return `${head}\n... [output capped: ${this.dropped} bytes dropped] ...\n${this.tail.toString("utf8")}`;
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * A bash-tool command in a Pod: the same wrapper as the Docker tier (it
 * reports its process group first and its status last), so a timeout or a
 * cancellation kills the command's whole group from a second exec. The exec
 * API has no environment or working-directory fields, so both are set by the
 * shell line itself.
 */
export async function k8sRunCommand(exec: Exec, namespace: string, pod: string, command: string, options: BackendExecOptions): Promise<BackendExecResult> {
  if (options.signal?.aborted) return { stdout: "", stderr: "Command cancelled before it started", exitCode: -1, timedOut: false, truncated: false };
  const nonce = randomBytes(12).toString("hex");
  const prelude = [
    ...options.env.map((e) => {
      const i = e.indexOf("=");
      return `export ${e.slice(0, i)}=${shellQuote(e.slice(i + 1))}`;
    }),
    `cd ${shellQuote(options.workingDir)} || exit 126`,
  ].join("\n");
  const argv = ["/bin/sh", "-c", EXEC_WRAPPER, "deerflow-exec", nonce, `${prelude}\n${command}`];
  const out = new HeadTail(options.maxOutputBytes);
  const err = new HeadTail(options.maxOutputBytes);
  let pidText = "";
  let pid: number | undefined;
  let errTail = "";
  let timedOut = false;
  let killRequested = false;
  let closeSocket: (() => void) | undefined;
  const kill = async (): Promise<void> => {
    if (killRequested) return;
    killRequested = true;
    if (pid !== undefined) {
      await rawExec(exec, namespace, pod, ["/bin/sh", "-c", 'kill -KILL "-$1" 2>/dev/null; exit 0', "deerflow-kill", String(pid)], {
        onStdout: () => {},
        onStderr: () => {},
        timeoutMs: 10_000,
      }).catch(() => undefined);
    }
    closeSocket?.();
  };
  let killing: Promise<void> | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    killing = kill();
  }, Math.max(1, options.timeoutMs));
  const onAbort = () => {
    killing = kill();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let raw: RawExec;
  try {
    raw = await rawExec(exec, namespace, pod, argv, {
      onOpen: (c) => {
        closeSocket = c;
      },
      onStdout: (b) => {
        if (pid === undefined) {
          pidText += b.toString("latin1");
          const nl = pidText.indexOf("\n");
          if (nl < 0) return;
          pid = Number(pidText.slice(0, nl));
          const rest = Buffer.from(pidText.slice(nl + 1), "latin1");
          if (rest.length) out.push(rest);
          return;
        }
        out.push(b);
      },
      onStderr: (b) => {
        // Hold back the last bytes: they may be the wrapper's status marker.
        errTail += b.toString("latin1");
        if (errTail.length > 64) {
          err.push(Buffer.from(errTail.slice(0, errTail.length - 64), "latin1"));
          errTail = errTail.slice(-64);
        }
      },
      timeoutMs: options.timeoutMs + 15_000,
    });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  await killing;
  const marker = new RegExp(`(?:^|\\n)${nonce} (\\d+)\\n$`).exec(errTail);
  if (marker) errTail = errTail.slice(0, marker.index + (errTail[marker.index] === "\n" ? 1 : 0));
  err.push(Buffer.from(errTail, "latin1"));
  let exitCode = marker ? Number(marker[1]) : exitCodeOf(raw.status);
  if (killRequested && !marker) exitCode = 137;
  return { stdout: out.text(), stderr: err.text(), exitCode, timedOut, truncated: out.dropped > 0 || err.dropped > 0 };
}

/** An argv in a Pod with raw bytes in and out (the file operations). */
export async function k8sExecBytes(exec: Exec, namespace: string, pod: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult> {
  const chunks: Buffer[] = [];
  let len = 0;
  let overflow = false;
  let stderr = "";
  let timedOut = false;
  let close: (() => void) | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    close?.();
  }, Math.max(1, options.timeoutMs));
  let raw: RawExec;
  try {
    raw = await rawExec(exec, namespace, pod, argv, {
      stdin: options.stdin ?? undefined,
      onOpen: (c) => {
        close = c;
      },
      onStdout: (b) => {
        if (overflow) return;
        if (len + b.length > options.maxBytes) {
          chunks.push(b.subarray(0, options.maxBytes - len));
          len = options.maxBytes;
          overflow = true;
          close?.();
          return;
        }
        chunks.push(Buffer.from(b));
        len += b.length;
      },
      onStderr: (b) => {
        if (stderr.length < 8192) stderr += b.toString("utf8").slice(0, 8192 - stderr.length);
      },
      timeoutMs: options.timeoutMs + 5_000,
    });
  } finally {
    clearTimeout(timer);
  }
  return { stdout: Buffer.concat(chunks), stderr, exitCode: overflow || timedOut ? -1 : exitCodeOf(raw.status), overflow, timedOut };
}
