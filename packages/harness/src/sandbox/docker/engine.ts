import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { loadDockerode } from "./dockerode";
import type { ContainerCreateOptions, ContainerInfo, ContainerInspectInfo, ImageInspectInfo } from "dockerode";
import { DockerError, maskEndpoint, toDockerError } from "./errors";
import { ExecDemuxer, killGroupArgv, stdinCommand, stdinWrappedArgv, wrappedArgv } from "./exec-stream";

/** How to reach the daemon. Without options: `DOCKER_HOST` when set, else `/var/run/docker.sock`. */
export interface DockerEngineOptions {
  /** `unix:///path/docker.sock`, `tcp://host:2375` (as `DOCKER_HOST`); overrides the environment. */
  host?: string;
  /** Deadline of control requests (inspect, create, remove…) in ms (default 30 s). Exec streams are bounded by their own timeout. */
  requestTimeoutMs?: number;
}

/** Options of {@link DockerEngine.exec}. */
export interface EngineExecOptions {
  /** `uid:gid` the process runs as (the container's user when absent). */
  user?: string;
  /** `KEY=value` entries (the container's environment is inherited by Docker and then overridden). */
  env?: string[];
  workingDir?: string;
  /** Wall-clock limit; the command's process group is killed when it expires. */
  timeoutMs: number;
  /** Aborting kills the command's process group like a timeout does. */
  signal?: AbortSignal;
  /** Bytes kept per stream (head + tail, as the bubblewrap tier). */
  maxOutputBytes: number;
}

/**
 * An exec started before its command (see {@link DockerEngine.prepareExec}):
 * `runc exec` — most of a command's cost — is paid ahead, off the command's
 * path. Used at most once, by {@link DockerEngine.exec}.
 */
export interface PreparedExec {
  /** The container it runs in. */
  readonly container: string;
  /** `user`, `env`, `workingDir` and output cap it was started with: a command needing others cannot use it. */
  readonly key: string;
  /** False once used, discarded, or its stream closed (the container died). */
  readonly usable: boolean;
  /** Close it without running anything (its wrapper exits on the closed stdin). */
  discard(): void;
}

/** An exec whose stream is open, its demuxer fed from the first byte. */
interface StartedExec {
  exec: Docker.Exec;
  socket: Duplex;
  demux: ExecDemuxer;
  nonce: string;
  closed: boolean;
}

/** What a prepared exec must match to run a command (see {@link PreparedExec.key}). */
export function execKey(options: Pick<EngineExecOptions, "user" | "env" | "workingDir" | "maxOutputBytes">): string {
  return JSON.stringify([options.user ?? "", options.env ?? [], options.workingDir ?? "", options.maxOutputBytes]);
}

class Prepared implements PreparedExec {
  private used = false;
  constructor(
    readonly container: string,
    readonly key: string,
    readonly started: StartedExec,
  ) {}
  get usable(): boolean {
    return !this.used && !this.started.closed;
  }
  take(): StartedExec | undefined {
    if (!this.usable) return undefined;
    this.used = true;
    return this.started;
  }
  discard(): void {
    this.used = true;
    this.started.socket.destroy();
  }
}

/** Result of {@link DockerEngine.exec}. */
export interface EngineExecResult {
  stdout: string;
  stderr: string;
  /** Exit status; 128+signal when killed (137 on timeout/abort); -1 when it never reported one. */
  exitCode: number;
  timedOut: boolean;
  /** True when cancelled through the signal. */
  aborted: boolean;
  truncated: boolean;
  /** False when the wrapper never reported its pid: the command did not start (the exec's stream ended first). */
  started?: boolean;
}

/** The parts of a container's state the sandbox needs. */
export interface ContainerState {
  id: string;
  name: string;
  running: boolean;
  /** `created`, `running`, `exited`, `dead`, `removing`… */
  status: string;
  labels: Record<string, string>;
  oomKilled: boolean;
  /** Host pid of the container's init process (0 when not running). */
  pid: number;
}

/** A container as listed by label. */
export interface ContainerSummary {
  id: string;
  /** Name without the leading `/`. */
  name: string;
  state: string;
  labels: Record<string, string>;
  created: number;
}

function describeEndpoint(host: string | undefined): string {
  const h = host ?? process.env.DOCKER_HOST;
  return h && h !== "" ? h : "unix:///var/run/docker.sock";
}

function modemOptions(host: string | undefined, timeout?: number): Docker.DockerOptions {
  // The modem merges these over its own defaults (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, the default socket).
  if (!host) return timeout ? { timeout } : {};
  if (host.startsWith("unix://")) return { socketPath: host.slice("unix://".length) || "/var/run/docker.sock", timeout };
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return { host: url.hostname, port: url.port || 2375, protocol: "http", timeout };
}

/** How long an exec stream may stay open after its command ended (pipes held by escaped children). */
const DRAIN_GRACE_MS = 250;

/**
 * A small typed wrapper over the Docker Engine API (`dockerode`): the calls
 * the container sandbox, the provisioner and `doctor` make, each mapped to a
 * {@link DockerError} with a stable code. Never pulls images.
 */
export class DockerEngine {
  /** The endpoint as shown in messages (credentials masked). */
  readonly endpoint: string;
  private readonly control: Docker;
  private readonly stream: Docker;

  constructor(options: DockerEngineOptions = {}) {
    this.endpoint = maskEndpoint(describeEndpoint(options.host));
    const timeout = options.requestTimeoutMs ?? 30_000;
    const Dockerode = loadDockerode();
    this.control = new Dockerode(modemOptions(options.host, timeout));
    // Exec streams live as long as their command; their deadline is the command timeout, not the request timeout.
    this.stream = new Dockerode(modemOptions(options.host));
  }

  private fail(err: unknown, what: string, extra?: Record<string, unknown>): DockerError {
    return toDockerError(err, what, this.endpoint, extra);
  }

  /** Ping the daemon and return its version. @throws DockerError docker_unreachable / docker_permission_denied. */
  async ping(): Promise<{ version: string; apiVersion: string; os: string }> {
    try {
      await this.control.ping();
      const v = await this.control.version();
      return { version: v.Version, apiVersion: v.ApiVersion, os: v.Os };
    } catch (err) {
      throw this.fail(err, "ping");
    }
  }

  /** Inspect a local image; `null` when it is not present. */
  async inspectImage(ref: string): Promise<ImageInspectInfo | null> {
    try {
      return await this.control.getImage(ref).inspect();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      throw this.fail(err, `inspect image ${ref}`, { image: ref });
    }
  }

  /** Like {@link inspectImage} but a missing image is an error naming the reference. @throws DockerError docker_image_missing. */
  async requireImage(ref: string): Promise<ImageInspectInfo> {
    const info = await this.inspectImage(ref);
    if (!info) {
      throw new DockerError(`Docker image '${ref}' is not present on ${this.endpoint}; build it (deerflow sandbox image build) or load it — the sandbox never pulls`, {
        code: "docker_image_missing",
        details: { image: ref },
      });
    }
    return info;
  }

  /** Create a container; returns its id. @throws DockerError docker_conflict when the name is taken, docker_image_missing. */
  async createContainer(options: ContainerCreateOptions): Promise<string> {
    try {
      const c = await this.control.createContainer(options);
      return c.id;
    } catch (err) {
      const e = err as { statusCode?: number };
      if (e.statusCode === 404 && options.Image) {
        throw new DockerError(`Docker image '${options.Image}' is not present on ${this.endpoint}; the sandbox never pulls`, {
          code: "docker_image_missing",
          cause: err,
          details: { image: options.Image },
        });
      }
      throw this.fail(err, `create container ${options.name ?? ""}`.trim(), { name: options.name });
    }
  }

  async startContainer(idOrName: string): Promise<void> {
    try {
      await this.control.getContainer(idOrName).start();
    } catch (err) {
      // 304: already started.
      if ((err as { statusCode?: number }).statusCode === 304) return;
      throw this.fail(err, `start container ${idOrName}`, { container: idOrName });
    }
  }

  /** Inspect a container; `null` when it does not exist. */
  async inspectContainer(idOrName: string): Promise<ContainerState | null> {
    let info: ContainerInspectInfo;
    try {
      info = await this.control.getContainer(idOrName).inspect();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      throw this.fail(err, `inspect container ${idOrName}`, { container: idOrName });
    }
    return {
      id: info.Id,
      name: info.Name.replace(/^\//, ""),
      running: info.State.Running === true,
      status: info.State.Status,
      labels: info.Config.Labels ?? {},
      oomKilled: info.State.OOMKilled === true,
      pid: info.State.Pid ?? 0,
    };
  }

  /** Force-remove a container (and its anonymous volumes); false when it was already gone. */
  async removeContainer(idOrName: string): Promise<boolean> {
    try {
      await this.control.getContainer(idOrName).remove({ force: true, v: true });
      return true;
    } catch (err) {
      const code = (err as { statusCode?: number }).statusCode;
      if (code === 404) return false;
      // 409 "removal already in progress": someone else is removing it.
      if (code === 409) return true;
      throw this.fail(err, `remove container ${idOrName}`, { container: idOrName });
    }
  }

  /** Rename a container. */
  async renameContainer(idOrName: string, name: string): Promise<void> {
    try {
      await this.control.getContainer(idOrName).rename({ name });
    } catch (err) {
      throw this.fail(err, `rename container ${idOrName} to ${name}`, { container: idOrName, name });
    }
  }

  /** Containers (running or not) carrying every given label (`key` alone matches any value). */
  async listContainers(labels: Record<string, string | true>): Promise<ContainerSummary[]> {
    const filter = Object.entries(labels).map(([k, v]) => (v === true ? k : `${k}=${v}`));
    let list: ContainerInfo[];
    try {
      list = await this.control.listContainers({ all: true, filters: JSON.stringify({ label: filter }) });
    } catch (err) {
      throw this.fail(err, "list containers");
    }
    return list.map((c) => ({
      id: c.Id,
      name: (c.Names[0] ?? "").replace(/^\//, ""),
      state: c.State,
      labels: c.Labels ?? {},
      created: c.Created,
    }));
  }

  /**
   * Run `command` through `/bin/sh -c` in a running container, stdin-less,
   * capturing stdout/stderr capped at `maxOutputBytes` each. On timeout or
   * abort the command's whole process group is killed (from a second exec,
   * see {@link wrappedArgv}); its background children end with it.
   * @throws DockerError docker_container_missing / docker_container_not_running when it cannot start.
   */
  async exec(container: string, command: string, options: EngineExecOptions, prepared?: PreparedExec): Promise<EngineExecResult> {
    if (options.signal?.aborted) {
      return { stdout: "", stderr: "Command cancelled before it started", exitCode: -1, timedOut: false, aborted: true, truncated: false };
    }
    let started = prepared instanceof Prepared && prepared.container === container && prepared.key === execKey(options) ? prepared.take() : undefined;
    if (started) {
      started.socket.write(stdinCommand(started.nonce, command));
    } else {
      prepared?.discard();
      const nonce = randomBytes(12).toString("hex");
      started = await this.startExec(container, wrappedArgv(nonce, command), nonce, options, false);
    }
    const { exec, socket, demux } = started;
    const ended = started;
    let timedOut = false;
    let aborted = false;
    let killRequested = false;
    let killer: Promise<void> | undefined;
    const kill = (): void => {
      if (killRequested) return;
      killRequested = true;
      const pgid = demux.pid;
      if (pgid === undefined) {
        // Not yet reported: kill as soon as it is; the wrapper prints it before anything else.
        demux.onPid = (pid) => {
          killer = this.killGroup(container, pid, options.user, socket);
        };
        return;
      }
      killer = this.killGroup(container, pgid, options.user, socket);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.max(1, options.timeoutMs));
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // After the wrapper's final marker, only escaped background processes can hold the stream open.
    demux.onMarker = () => setTimeout(() => socket.destroy(), DRAIN_GRACE_MS).unref();
    try {
      await new Promise<void>((resolve) => {
        if (ended.closed) return resolve();
        socket.once("end", () => resolve());
        socket.once("close", () => resolve());
        socket.once("error", () => resolve());
      });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.destroy();
    }
    await killer;
    const out = demux.finish();
    let exitCode = out.status;
    if (exitCode === undefined) {
      try {
        const info = await exec.inspect();
        exitCode = typeof info.ExitCode === "number" && !info.Running ? info.ExitCode : -1;
      } catch {
        exitCode = -1;
      }
    }
    if (killRequested && out.status === undefined && exitCode === -1) exitCode = 137;
    return { stdout: out.stdout, stderr: out.stderr, exitCode, timedOut, aborted, truncated: out.truncated, started: out.pid !== undefined };
  }

  /**
   * Start the wrapper of the next command in `container` now, reading that command from stdin
   * (see STDIN_EXEC_WRAPPER), so {@link exec} with it skips creating and starting an exec. Same
   * user, environment, working directory and wrapper as a cold exec: only the moment differs.
   * @throws DockerError docker_container_missing / docker_container_not_running.
   */
  async prepareExec(container: string, options: Pick<EngineExecOptions, "user" | "env" | "workingDir" | "maxOutputBytes">): Promise<PreparedExec> {
    const nonce = randomBytes(12).toString("hex");
    const started = await this.startExec(container, stdinWrappedArgv(nonce), nonce, options, true);
    return new Prepared(container, execKey(options), started);
  }

  /** Create and start a wrapped exec; its demuxer is fed from the first byte (a prepared exec prints its pid line before it is used). */
  private async startExec(container: string, argv: string[], nonce: string, options: Pick<EngineExecOptions, "user" | "env" | "workingDir" | "maxOutputBytes">, stdin: boolean): Promise<StartedExec> {
    const exec = await this.createExec(container, argv, options, stdin);
    let socket: Duplex;
    try {
      socket = (await exec.start({ hijack: true, stdin })) as Duplex;
    } catch (err) {
      throw this.execError(err, container);
    }
    const started: StartedExec = { exec, socket, demux: new ExecDemuxer(options.maxOutputBytes, nonce), nonce, closed: false };
    socket.on("data", (c: Buffer) => started.demux.push(c));
    const close = () => {
      started.closed = true;
    };
    socket.once("end", close);
    socket.once("close", close);
    socket.once("error", close);
    return started;
  }

  /** Run an argv (no wrapper, no group kill) and return its exit code and output; for short probes. */
  async execArgv(container: string, argv: string[], options: Omit<EngineExecOptions, "signal">): Promise<EngineExecResult> {
    const exec = await this.createExec(container, argv, options);
    let socket: Duplex;
    try {
      socket = (await exec.start({ hijack: true, stdin: false })) as Duplex;
    } catch (err) {
      throw this.execError(err, container);
    }
    const demux = new ExecDemuxer(options.maxOutputBytes);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, Math.max(1, options.timeoutMs));
    await new Promise<void>((resolve) => {
      socket.on("data", (c: Buffer) => demux.push(c));
      socket.once("end", () => resolve());
      socket.once("close", () => resolve());
      socket.once("error", () => resolve());
    });
    clearTimeout(timer);
    socket.destroy();
    const out = demux.finish();
    let exitCode = -1;
    try {
      const info = await exec.inspect();
      if (typeof info.ExitCode === "number" && !info.Running) exitCode = info.ExitCode;
    } catch {
      /* container gone: -1 */
    }
    return { stdout: out.stdout, stderr: out.stderr, exitCode, timedOut, aborted: false, truncated: out.truncated };
  }

  private async createExec(container: string, argv: string[], options: Pick<EngineExecOptions, "user" | "env" | "workingDir">, stdin = false): Promise<Docker.Exec> {
    try {
      return await this.stream.getContainer(container).exec({
        Cmd: argv,
        AttachStdin: stdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: options.user,
        Env: options.env,
        WorkingDir: options.workingDir,
      });
    } catch (err) {
      throw this.execError(err, container);
    }
  }

  private execError(err: unknown, container: string): DockerError {
    const e = err as { statusCode?: number };
    if (e.statusCode === 409) {
      return new DockerError(`Sandbox container ${container} is not running`, { code: "docker_container_not_running", cause: err, details: { container } });
    }
    if (e.statusCode === 404) {
      return new DockerError(`Sandbox container ${container} does not exist`, { code: "docker_container_missing", cause: err, details: { container } });
    }
    return this.fail(err, `exec in ${container}`, { container });
  }

  /** Kill a process group from a second exec; if that fails (container gone), drop the stream so the caller returns. */
  private async killGroup(container: string, pgid: number, user: string | undefined, socket: Duplex): Promise<void> {
    try {
      const res = await this.execArgv(container, killGroupArgv(pgid), { user, timeoutMs: 10_000, maxOutputBytes: 4096 });
      if (res.exitCode !== 0) socket.destroy();
      // A process that left the group (setsid) may still hold the pipes: give it the bubblewrap tier's drain grace.
      else setTimeout(() => socket.destroy(), DRAIN_GRACE_MS).unref();
    } catch {
      socket.destroy();
    }
  }
}

/** A fresh engine client (see {@link DockerEngineOptions} for how the endpoint is chosen). */
export function connectDocker(options: DockerEngineOptions = {}): DockerEngine {
  return new DockerEngine(options);
}
