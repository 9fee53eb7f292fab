/**
 * `deerflow doctor` for the Docker sandbox (`sandbox.use: docker` or DeerFlow's AioSandboxProvider):
 * the daemon's socket (DOCKER_HOST, else /var/run/docker.sock) answers, this process may open it
 * (on EACCES: which socket, owned by which group), the configured image is present locally (the
 * provider never pulls), and a container with the provider's hardening starts from it and has
 * the `sh` and `sleep` the provider needs. Plus the check every `use:` gets: one no provider
 * implements is an error here, not at the first run.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DeerFlowError } from "@deerflow-ts/harness/errors";
import type { SandboxConfig } from "@deerflow-ts/harness/sandbox";
import { BWRAP_PROVIDER_NAMES, LOCAL_PROVIDER_NAMES } from "@deerflow-ts/harness/sandbox";
import { buildContainerSpec, connectDocker, DOCKER_PROVIDER_NAMES, DOCKERODE_VERSION, LABELS } from "@deerflow-ts/harness/sandbox/docker";
import type { DockerEngine } from "@deerflow-ts/harness/sandbox/docker";
import { DEFAULT_SANDBOX_IMAGE, IMAGE_BUILD_LABEL } from "@deerflow-ts/harness/sandbox/image";
import type { Finding } from "./doctor";

/** `sandbox.use` values that select the Docker provider (the provider's own list). */
export const DOCKER_USE_NAMES: ReadonlySet<string> = DOCKER_PROVIDER_NAMES;

/** Whether `use` selects the Docker provider. */
export function selectsDocker(use: string | undefined): boolean {
  return use !== undefined && DOCKER_USE_NAMES.has(use.trim());
}

/** Every `sandbox.use` some provider implements ("" and `auto` choose bwrap or local). */
export function supportedSandboxUses(): string[] {
  return ["auto", ...LOCAL_PROVIDER_NAMES, ...BWRAP_PROVIDER_NAMES, ...DOCKER_USE_NAMES];
}

/**
 * An error when `sandbox.use` names no provider of ours (DeerFlow's e2b provider, a typo): every
 * run would fail, and `serve`/`run` refuse to start with it.
 */
export function sandboxUseFinding(use: string | undefined): Finding | undefined {
  const name = use?.trim() ?? "";
  if (name === "" || supportedSandboxUses().includes(name)) return undefined;
  return {
    check: "sandbox",
    level: "error",
    message: `sandbox.use '${name}' is not a supported sandbox provider: \`deerflow serve\` and \`deerflow run\` refuse to start with it`,
    fix: "Set sandbox.use to bwrap (bubblewrap on this host), docker (or DeerFlow's deerflow.community.aio_sandbox:AioSandboxProvider) for containers, or local (no isolation).",
  };
}

/** The endpoint the engine uses: DOCKER_HOST, else the default socket. */
export function dockerEndpoint(env: Record<string, string | undefined>): string {
  const host = env.DOCKER_HOST?.trim();
  return host ? host : "unix:///var/run/docker.sock";
}

function groupName(gid: number): string | undefined {
  try {
    for (const line of readFileSync("/etc/group", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (id !== undefined && Number(id) === gid) return name;
    }
  } catch {
    // no /etc/group (a container without one): only the gid is shown
  }
  return undefined;
}

/** Who owns the socket and who we are, for a permission-denied fix that names both. */
export function socketPermissionHint(socketPath: string): string {
  const who = typeof process.getuid === "function" ? `uid ${process.getuid()}${os.userInfo().username ? ` (${os.userInfo().username})` : ""}` : "this user";
  try {
    const st = statSync(socketPath);
    const group = groupName(st.gid);
    const mode = (st.mode & 0o777).toString(8).padStart(3, "0");
    const groupText = group ? `group '${group}' (gid ${st.gid})` : `gid ${st.gid}`;
    return (
      `${socketPath} is owned by uid ${st.uid}, ${groupText}, mode ${mode}; ${who} may not open it. ` +
      `Add the user that runs DeerFlow to ${group ? `'${group}'` : `gid ${st.gid}`} (sudo usermod -aG ${group ?? st.gid} $USER, then log in again), or point DOCKER_HOST at a socket it may use (rootless Docker: unix://$XDG_RUNTIME_DIR/docker.sock).`
    );
  } catch {
    return `${who} may not open ${socketPath}; point DOCKER_HOST at a socket it may use.`;
  }
}

/** The uid:gid sandbox commands run as (the server's own, or `run_as_uid` when it is root). */
export function containerRunAs(config: SandboxConfig): { uid: number; gid: number } {
  const uid = typeof process.getuid === "function" ? process.getuid() : 1000;
  const gid = typeof process.getgid === "function" ? process.getgid() : uid;
  if (uid !== 0) return { uid, gid };
  return { uid: config.run_as_uid, gid: config.run_as_gid ?? config.run_as_uid };
}

/**
 * Start one container from `image` with the provider's own hardened spec (read-only root, all
 * capabilities dropped, no-new-privileges, no network, limits, a non-root uid), run
 * `command -v sleep` in it, and remove it. Catches an image without a shell or `sleep`, and a
 * daemon that refuses the hardening (a limit the kernel lacks).
 */
async function smokeContainer(engine: DockerEngine, config: SandboxConfig, image: string): Promise<Finding> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "deerflow-doctor-"));
  const runAs = containerRunAs(config);
  const name = `${config.container_prefix ?? "deer-flow-sandbox"}-doctor-${randomBytes(4).toString("hex")}`;
  let id: string | undefined;
  try {
    const spec = buildContainerSpec({
      // custom mounts are the provider's concern (missing host paths are skipped there); the doctor binds only scratch dirs
      config: { ...config, mounts: [] },
      image,
      name,
      role: "pool",
      dirs: { workspace: scratch, uploads: scratch, outputs: scratch },
      runAs,
      owner: { instanceId: `doctor-${process.pid}`, hostname: os.hostname(), pid: process.pid, pidStart: "0" },
    });
    spec.Labels = { ...spec.Labels, [LABELS.role]: "doctor" };
    id = await engine.createContainer(spec);
    await engine.startContainer(id);
    const res = await engine.execArgv(id, ["/bin/sh", "-c", "command -v sleep >/dev/null && echo ok"], { user: `${runAs.uid}:${runAs.gid}`, timeoutMs: 20_000, maxOutputBytes: 4096 });
    if (res.exitCode === 0 && res.stdout.trim() === "ok") {
      return { check: "docker", level: "ok", message: `a hardened sandbox container starts from ${image} (uid ${runAs.uid}, read-only root, no capabilities, no network) and has sh and sleep` };
    }
    return {
      check: "docker",
      level: "error",
      message: `the image ${image} lacks what the provider needs: \`command -v sleep\` in /bin/sh exited ${res.exitCode}${res.stderr.trim() ? ` (${res.stderr.trim().split("\n")[0]})` : ""}`,
      fix: "Use an image with /bin/sh and sleep (deerflow sandbox image build makes one).",
    };
  } catch (err) {
    return {
      check: "docker",
      level: "error",
      message: `cannot start a sandbox container from ${image}: ${(err as Error).message}`,
      fix:
        err instanceof DeerFlowError && err.code === "sandbox_config_invalid"
          ? "Fix the sandbox key named above."
          : "The daemon refused the sandbox's container settings; check `docker info` for warnings (memory/pids limit support) and that the image has /bin/sh.",
    };
  } finally {
    if (id) await engine.removeContainer(id).catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Docker findings when `sandbox.use` selects the Docker provider (none otherwise). With
 * `sandbox.provisioner_url` set, containers are made by the provisioner, so the local daemon is
 * not needed and not checked.
 */
export async function dockerFindings(config: SandboxConfig, env: Record<string, string | undefined>, timeoutMs: number): Promise<Finding[]> {
  if (!selectsDocker(config.use)) return [];
  const provisioner = (config as { provisioner_url?: unknown }).provisioner_url;
  if (typeof provisioner === "string" && provisioner.trim()) {
    return [{ check: "docker", level: "ok", message: `sandbox.provisioner_url is set: sandbox containers are created by the provisioner, the local Docker daemon is not used` }];
  }
  const endpoint = dockerEndpoint(env);
  const socketPath = endpoint.startsWith("unix://") ? endpoint.slice("unix://".length) : undefined;
  const out: Finding[] = [];
  let engine: ReturnType<typeof connectDocker>;
  try {
    engine = connectDocker({ host: endpoint, requestTimeoutMs: timeoutMs });
  } catch (err) {
    if (!(err instanceof DeerFlowError) || err.code !== "docker_client_missing") throw err;
    return [{ check: "docker", level: "error", message: "the Docker client library (dockerode, an optional dependency) is not installed", fix: `npm install dockerode@${DOCKERODE_VERSION} where deerflow-ts is installed (add -g for a global install), or choose another sandbox (sandbox.use).` }];
  }
  let version: string;
  try {
    version = (await engine.ping()).version;
  } catch (err) {
    const code = err instanceof DeerFlowError ? err.code : "";
    if (code === "docker_permission_denied") {
      return [{ check: "docker", level: "error", message: `permission denied opening the Docker socket ${socketPath ?? endpoint}`, fix: socketPath ? socketPermissionHint(socketPath) : "Check the credentials DOCKER_HOST uses." }];
    }
    const where = env.DOCKER_HOST?.trim() ? `${engine.endpoint} (DOCKER_HOST)` : engine.endpoint;
    const errno = err instanceof DeerFlowError ? (err.details as { errno?: string } | undefined)?.errno : undefined;
    const why = errno === "ENOENT" ? "no socket there" : errno === "ECONNREFUSED" ? "nothing listens on it (connection refused)" : (err as Error).message;
    return [
      {
        check: "docker",
        level: "error",
        message: `no Docker daemon answers at ${where}: ${why}`,
        fix: env.DOCKER_HOST?.trim()
          ? "Start the daemon DOCKER_HOST points at, or fix DOCKER_HOST (unset it to use /var/run/docker.sock)."
          : "Install and start Docker (apt-get install docker.io; systemctl start docker, or dockerd & as root), or set DOCKER_HOST to a running daemon.",
      },
    ];
  }
  out.push({ check: "docker", level: "ok", message: `Docker ${version} answers at ${engine.endpoint}` });

  const image = config.image?.trim() || DEFAULT_SANDBOX_IMAGE;
  const build = image === DEFAULT_SANDBOX_IMAGE ? "deerflow sandbox image build" : `deerflow sandbox image build --tag ${image}`;
  let info;
  try {
    info = await engine.inspectImage(image);
  } catch (err) {
    out.push({ check: "docker", level: "error", message: `cannot inspect the image ${image}: ${(err as Error).message}` });
    return out;
  }
  if (!info) {
    out.push({
      check: "docker",
      level: "error",
      message: `the sandbox image '${image}' is not present on ${engine.endpoint}${config.image ? " (sandbox.image)" : " (the default; sandbox.image is not set)"}; the sandbox never pulls images`,
      fix: `Build it: ${build} (or \`${build} --from-host\` where no registry is reachable), or docker load / docker pull it yourself.`,
    });
    return out;
  }
  const how = info.Config?.Labels?.[IMAGE_BUILD_LABEL];
  out.push({ check: "docker", level: "ok", message: `image ${image} is present (${info.Id.slice(0, 19)}, ${Math.round(info.Size / 1024 / 1024)} MiB${how ? `, built from ${how === "host" ? "this host's programs" : "the Dockerfile"}` : ""})` });
  out.push(await smokeContainer(engine, config, image));
  return out;
}
