import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { SandboxError } from "@deerflow-ts/harness";
import type { BytesExecOptions, BytesExecResult } from "../backend";

const STDERR_CAP = 8192;

/** dockerode connection options for a `DOCKER_HOST`-style endpoint (unix:// or tcp://), as the Docker engine wrapper reads it. */
export function dockerodeOptions(host: string | undefined): Docker.DockerOptions {
  if (!host) return {};
  if (host.startsWith("unix://")) return { socketPath: host.slice("unix://".length) || "/var/run/docker.sock" };
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return { host: url.hostname, port: url.port || 2375, protocol: "http" };
}

/**
 * `docker exec` of an argv with raw bytes: stdin from a buffer (then closed),
 * stdout kept as bytes up to `maxBytes` (the stream is cut past it), stderr
 * kept for diagnostics. The file operations need this; commands of the bash
 * tool go through the engine wrapper's `exec` (timeouts kill their process group).
 */
export async function dockerExecBytes(docker: Docker, container: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult> {
  let exec: Docker.Exec;
  try {
    exec = await docker.getContainer(container).exec({
      Cmd: argv,
      AttachStdin: options.stdin !== undefined,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 404) throw new SandboxError(`Sandbox container ${container} does not exist`, { code: "sandbox_not_found" });
    if (status === 409) throw new SandboxError(`Sandbox container ${container} is not running`, { code: "sandbox_not_running" });
    throw new SandboxError(`exec in sandbox container ${container} failed: ${(err as Error).message}`, { code: "sandbox_exec_failed" });
  }
  const socket = (await exec.start({ hijack: true, stdin: options.stdin !== undefined })) as Duplex;
  const out: Buffer[] = [];
  let outLen = 0;
  let err = "";
  let overflow = false;
  let timedOut = false;
  let pending: Buffer = Buffer.alloc(0);
  const push = (chunk: Buffer): void => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    // Docker's multiplexed stream: 8-byte header (stream type, 3 zero bytes, big-endian length), then the payload.
    while (pending.length >= 8) {
      const len = pending.readUInt32BE(4);
      if (pending.length < 8 + len) break;
      const type = pending[0];
      const payload = pending.subarray(8, 8 + len);
      pending = pending.subarray(8 + len);
      if (type === 1) {
        if (outLen + payload.length > options.maxBytes) {
          out.push(payload.subarray(0, options.maxBytes - outLen));
          outLen = options.maxBytes;
          overflow = true;
          socket.destroy();
          return;
        }
        out.push(Buffer.from(payload));
        outLen += payload.length;
      } else if (type === 2 && err.length < STDERR_CAP) {
        err += payload.toString("utf8").slice(0, STDERR_CAP - err.length);
      }
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    socket.destroy();
  }, Math.max(1, options.timeoutMs));
  await new Promise<void>((resolve) => {
    socket.on("data", push);
    socket.once("end", () => resolve());
    socket.once("close", () => resolve());
    socket.once("error", () => resolve());
    if (options.stdin !== undefined) {
      socket.write(Buffer.from(options.stdin));
      // Half-close: the daemon closes the process's stdin, so `cat > file` ends.
      socket.end();
    }
  });
  clearTimeout(timer);
  socket.destroy();
  let exitCode = -1;
  if (!overflow && !timedOut) {
    // The stream can end a moment before the daemon records the exit: ask again a few times (bounded).
    for (let i = 0; i < 20 && exitCode === -1; i++) {
      try {
        const info = await exec.inspect();
        if (typeof info.ExitCode === "number" && !info.Running) exitCode = info.ExitCode;
        else await new Promise((r) => setTimeout(r, 10));
      } catch {
        break; // container gone: -1
      }
    }
  }
  return { stdout: Buffer.concat(out), stderr: err, exitCode, overflow, timedOut };
}
