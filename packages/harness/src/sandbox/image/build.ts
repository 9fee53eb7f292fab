import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { loadDockerode } from "../docker/dockerode";
import { SandboxError } from "../../errors";
import { packageAssetPath } from "../../fs/package-assets";
import { DEFAULT_DOCKER_IMAGE } from "../docker/docker-provider";
import { connectDocker } from "../docker/engine";
import type { DockerEngine } from "../docker/engine";
import { toDockerError } from "../docker/errors";
import { planHostRootfs, writeRootfs } from "./host-rootfs";
import type { HostRootfsOptions, RootfsPlan } from "./host-rootfs";

/** The image the Docker provider uses when `sandbox.image` is not set, and what `deerflow sandbox image build` tags. */
export const DEFAULT_SANDBOX_IMAGE: string = DEFAULT_DOCKER_IMAGE;

/** Label carrying the content key of a host-built image (an unchanged host reuses it). */
export const IMAGE_CONTENT_LABEL = "org.deerflow.sandbox.content";
/** Label naming how the image was built: `dockerfile`, `host` or `debootstrap`. */
export const IMAGE_BUILD_LABEL = "org.deerflow.sandbox.build";

/** The default sandbox Dockerfile (`assets/sandbox/Dockerfile` when installed; docker/sandbox/Dockerfile in a checkout). */
export const SANDBOX_DOCKERFILE = packageAssetPath(import.meta.url, "@deerflow-ts/harness", "sandbox/Dockerfile", "docker/sandbox/Dockerfile");

/** Where build progress goes (one line per call). */
export type BuildLog = (line: string) => void;

/** An image that was built (or found already built from the same content). */
export interface BuiltImage {
  /** The tag written, e.g. `deerflow-sandbox:latest`. */
  ref: string;
  /** Image id (`sha256:…`). */
  id: string;
  /** How it was made. */
  method: "host" | "dockerfile" | "debootstrap";
  /** True when an image with the same content key already carried the tag and nothing was built. */
  reused: boolean;
  /** Size the daemon reports, in bytes. */
  sizeBytes: number;
  /** Host-built only: what the plan found (programs, missing ones, Python version). */
  plan?: Pick<RootfsPlan, "programs" | "missingPrograms" | "missingLibraries" | "pythonVersion" | "bytes" | "contentKey">;
}

/** Options shared by both builders. */
export interface BuildImageOptions {
  /** Tag to write (default {@link DEFAULT_SANDBOX_IMAGE}). */
  tag?: string;
  /** Engine client (default: `DOCKER_HOST`, else /var/run/docker.sock). */
  engine?: DockerEngine;
  log?: BuildLog;
}

function apiClient(): Docker {
  // Same endpoint rules as the engine wrapper: docker-modem reads DOCKER_HOST, else the default socket.
  return new (loadDockerode())();
}

function splitRef(ref: string): { repo: string; tag: string } {
  const at = ref.lastIndexOf(":");
  // a colon before the last slash is a registry port (`host:5000/name`), not a tag
  if (at > ref.lastIndexOf("/")) return { repo: ref.slice(0, at), tag: ref.slice(at + 1) };
  return { repo: ref, tag: "latest" };
}

/**
 * Read a Docker progress stream (one JSON object per line) to its end; resolves with the
 * image id the daemon announced, rejects with the daemon's error text.
 */
function followProgress(stream: NodeJS.ReadableStream, log: BuildLog): Promise<{ id?: string; output: string }> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    let id: string | undefined;
    let error: string | undefined;
    const output: string[] = [];
    const line = (text: string) => {
      if (!text.trim()) return;
      let ev: { stream?: string; status?: string; error?: string; errorDetail?: { message?: string }; aux?: { ID?: string } };
      try {
        ev = JSON.parse(text);
      } catch {
        output.push(text);
        return;
      }
      if (ev.error || ev.errorDetail) error = ev.errorDetail?.message ?? ev.error;
      if (ev.aux?.ID) id = ev.aux.ID;
      const shown = (ev.stream ?? ev.status ?? "").replace(/\n$/, "");
      if (ev.status && /^sha256:[0-9a-f]{64}$/.test(ev.status.trim())) id = ev.status.trim();
      if (shown) {
        output.push(shown);
        for (const l of shown.split("\n")) if (l.trim()) log(l);
      }
    };
    stream.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        line(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    stream.on("error", reject);
    stream.on("end", () => {
      line(buffered);
      if (error) reject(new Error(error));
      else resolve({ id, output: output.join("\n") });
    });
  });
}

/** The `FROM` images of a Dockerfile (build args' defaults substituted), for a clear message when one is missing. */
export function dockerfileBaseImages(text: string, buildArgs: Record<string, string> = {}): string[] {
  const args: Record<string, string> = {};
  const bases: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?/i.exec(line);
    if (arg) args[arg[1]] = buildArgs[arg[1]] ?? arg[2]?.replace(/^["']|["']$/g, "") ?? "";
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)/i.exec(line);
    if (from) {
      const ref = from[1].replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, n: string) => args[n] ?? "");
      if (ref.toLowerCase() !== "scratch") bases.push(ref);
    }
  }
  return bases;
}

/**
 * Build the default image from a Dockerfile (default {@link SANDBOX_DOCKERFILE}) with the
 * daemon's builder. The builder pulls a base image it does not have; where no registry is
 * reachable that fails, and the error names the missing base and points at `--from-host`.
 * @throws SandboxError `sandbox_image_base_missing` (base absent, pull failed), `sandbox_image_build_failed`;
 *   DockerError when the daemon cannot be used.
 */
export async function buildImageFromDockerfile(options: BuildImageOptions & { dockerfile?: string; buildArgs?: Record<string, string> } = {}): Promise<BuiltImage> {
  const ref = options.tag ?? DEFAULT_SANDBOX_IMAGE;
  const log = options.log ?? (() => undefined);
  const engine = options.engine ?? connectDocker();
  const dockerfile = path.resolve(options.dockerfile ?? SANDBOX_DOCKERFILE);
  if (!existsSync(dockerfile)) throw new SandboxError(`Dockerfile not found: ${dockerfile}`, { code: "sandbox_image_build_failed", details: { dockerfile } });
  await engine.ping();
  const bases = dockerfileBaseImages(readFileSync(dockerfile, "utf8"), options.buildArgs);
  const absent: string[] = [];
  for (const base of bases) if (!(await engine.inspectImage(base))) absent.push(base);
  if (absent.length) log(`base image ${absent.join(", ")} is not present locally: the daemon will try to pull it`);
  const context = path.dirname(dockerfile);
  let progress;
  try {
    const stream = await apiClient().buildImage(
      { context, src: readdirSync(context) },
      { t: ref, dockerfile: path.basename(dockerfile), buildargs: options.buildArgs, labels: { [IMAGE_BUILD_LABEL]: "dockerfile" }, rm: true, forcerm: true },
    );
    progress = await followProgress(stream, log);
  } catch (err) {
    const text = (err as Error).message ?? String(err);
    if (absent.length && /pull|registry|manifest|dial tcp|no such host|lookup|repository does not exist|not found/i.test(text)) {
      throw new SandboxError(
        `Cannot build ${ref} from ${dockerfile}: its base image ${absent.join(", ")} is not present locally and could not be pulled (${text.split("\n")[0]}). ` +
          "Load the base image (docker load), or build without any registry: deerflow sandbox image build --from-host (this host's programs), or --debootstrap (as root, a Debian from the apt mirror)",
        { code: "sandbox_image_base_missing", cause: err, details: { image: ref, base: absent } },
      );
    }
    if ((err as { statusCode?: number; code?: string }).statusCode !== undefined || (err as { code?: string }).code) throw toDockerError(err, `build image ${ref}`, engine.endpoint, { image: ref });
    throw new SandboxError(`Building ${ref} from ${dockerfile} failed: ${text}`, { code: "sandbox_image_build_failed", cause: err, details: { image: ref } });
  }
  const info = await engine.requireImage(ref);
  return { ref, id: progress.id ?? info.Id, method: "dockerfile", reused: false, sizeBytes: info.Size };
}

/**
 * Pack `root` (owner 0) and `docker import` it as `ref` with `labels`, a PATH and `CMD ["/bin/sh"]`;
 * resolves with the new image id.
 */
export async function importRootfs(engine: DockerEngine, root: string, ref: string, labels: Record<string, string>): Promise<string | undefined> {
  const { repo, tag } = splitRef(ref);
  const tar = tarStream(root);
  try {
    const stream = await apiClient().importImage(tar.stream, {
      repo,
      tag,
      changes: [`LABEL ${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(" ")}`, "ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", 'CMD ["/bin/sh"]'],
    });
    const [progress] = await Promise.all([followProgress(stream, () => undefined), tar.done]);
    return progress.id;
  } catch (err) {
    if (err instanceof SandboxError) throw err;
    throw toDockerError(err, `import image ${ref}`, engine.endpoint, { image: ref });
  }
}

/** Stream `root` as a tar archive owned by root (GNU tar). */
function tarStream(root: string): { stream: NodeJS.ReadableStream; done: Promise<void> } {
  const child = spawn("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", root, "-cf", "-", "."], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<void>((resolve, reject) => {
    child.on("error", (err) => reject(new SandboxError(`Cannot run tar to pack the image root: ${err.message}`, { code: "sandbox_image_build_failed", cause: err })));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new SandboxError(`tar failed packing the image root (exit ${code}): ${stderr.trim()}`, { code: "sandbox_image_build_failed" }))));
  });
  return { stream: child.stdout, done };
}

/**
 * Build an image without any registry: a root filesystem assembled from this host's programs,
 * their libraries and Python's standard library (see {@link planHostRootfs}), packed and
 * `docker import`ed. When the tag already holds an image of the same content key it is reused
 * unless `force`.
 * @throws SandboxError `sandbox_image_build_failed`; DockerError when the daemon cannot be used.
 */
export async function buildImageFromHost(options: BuildImageOptions & { force?: boolean; rootfs?: HostRootfsOptions; tmpDir?: string } = {}): Promise<BuiltImage> {
  const ref = options.tag ?? DEFAULT_SANDBOX_IMAGE;
  const log = options.log ?? (() => undefined);
  const engine = options.engine ?? connectDocker();
  await engine.ping();
  const plan = planHostRootfs(options.rootfs);
  const summary = {
    programs: plan.programs,
    missingPrograms: plan.missingPrograms,
    missingLibraries: plan.missingLibraries,
    pythonVersion: plan.pythonVersion,
    bytes: plan.bytes,
    contentKey: plan.contentKey,
  };
  const existing = await engine.inspectImage(ref);
  if (!options.force && existing?.Config?.Labels?.[IMAGE_CONTENT_LABEL] === plan.contentKey) {
    log(`${ref} is up to date (content ${plan.contentKey.slice(0, 12)})`);
    return { ref, id: existing.Id, method: "host", reused: true, sizeBytes: existing.Size, plan: summary };
  }
  log(`assembling a root filesystem: ${Object.keys(plan.programs).length} programs, ${plan.entries.size} paths, ${Math.round(plan.bytes / 1024 / 1024)} MiB${plan.pythonVersion ? `, Python ${plan.pythonVersion}` : ""}`);
  if (plan.missingPrograms.length) log(`not on this host (left out): ${plan.missingPrograms.join(", ")}`);
  const root = mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), "deerflow-image-"));
  try {
    writeRootfs(plan, root);
    log(`importing as ${ref}`);
    const id = await importRootfs(engine, root, ref, { [IMAGE_CONTENT_LABEL]: plan.contentKey, [IMAGE_BUILD_LABEL]: "host" });
    const info = await engine.requireImage(ref);
    return { ref, id: id ?? info.Id, method: "host", reused: false, sizeBytes: info.Size, plan: summary };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
