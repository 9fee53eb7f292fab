import { loadAppConfig, silentConfigLogger } from "@deerflow-ts/harness/config";
import { DeerFlowError } from "@deerflow-ts/harness/errors";
import { buildImageFromDebootstrap, buildImageFromDockerfile, buildImageFromHost, DEFAULT_SANDBOX_IMAGE, SANDBOX_DOCKERFILE } from "@deerflow-ts/harness/sandbox/image";
import type { BuiltImage } from "@deerflow-ts/harness/sandbox/image";
import { COMMON_HELP, commonOptions, describeError, parseCommand, UsageError } from "../common";
import type { CommonOptions } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow sandbox`. */
export const SANDBOX_HELP = `Usage: deerflow sandbox image build [options]

Build the sandbox image the Docker provider runs (sandbox.use:
deerflow.community.aio_sandbox:AioSandboxProvider, or docker). The provider
needs only a POSIX shell in an image; this one adds Python, pip and the usual
command-line tools.

  deerflow sandbox image build              from docker/sandbox/Dockerfile
                                            (Debian; its base image must be
                                            present or pullable)
  deerflow sandbox image build --from-host  without any registry: a root
                                            filesystem of this host's bash,
                                            coreutils, python3, git, curl…
                                            with their libraries, imported
  deerflow sandbox image build --debootstrap
                                            without any registry, as root: a
                                            Debian from this host's apt mirror
                                            with the Dockerfile's packages

Options:
  --tag REF          tag to write (default: sandbox.image from config.yaml,
                     else ${DEFAULT_SANDBOX_IMAGE})
  --from-host        build from this host's programs (works offline)
  --debootstrap      build a Debian with debootstrap from the apt mirror
                     (root; needs the mirror, not a registry; minutes)
  --suite NAME       --debootstrap: Debian suite (default: this host's)
  --mirror URL       --debootstrap: mirror (default: the one apt uses here)
  --dockerfile PATH  another Dockerfile (default ${SANDBOX_DOCKERFILE.replace(/^.*\/docker\//, "docker/")})
  --build-arg K=V    Dockerfile build argument (repeatable), e.g.
                     BASE_IMAGE=debian:bookworm-slim
  --force            --from-host / --debootstrap: rebuild even when the tag
                     already holds an image of the same content
${COMMON_HELP}

The Docker daemon is reached at DOCKER_HOST, else /var/run/docker.sock.
Exit codes: 0 built (or up to date), 1 the build failed (reason on stderr), 2 bad usage.`;

/** The tag a build writes by default: `sandbox.image` of the config when one is readable, else the default image. */
export function defaultImageTag(common: CommonOptions): string {
  try {
    const sandbox = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger }).config.sandbox as { image?: unknown } | undefined;
    if (typeof sandbox?.image === "string" && sandbox.image.trim()) return sandbox.image.trim();
  } catch {
    // no (readable) config: the default image
  }
  return DEFAULT_SANDBOX_IMAGE;
}

function megabytes(n: number): string {
  return `${Math.round(n / 1024 / 1024)} MiB`;
}

/** `deerflow sandbox …` (today: `sandbox image build`). */
export async function sandboxCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand(
    "sandbox",
    argv,
    {
      tag: { type: "string" },
      "from-host": { type: "boolean" },
      dockerfile: { type: "string" },
      "build-arg": { type: "string", multiple: true },
      force: { type: "boolean" },
      debootstrap: { type: "boolean" },
      suite: { type: "string" },
      mirror: { type: "string" },
    },
    true,
  );
  if (values.help) {
    term.line(SANDBOX_HELP);
    return 0;
  }
  const [group, sub, ...rest] = positionals;
  if (!group) {
    term.line(SANDBOX_HELP);
    return 2;
  }
  if (group !== "image" || sub !== "build" || rest.length) {
    throw new UsageError(`unknown subcommand '${positionals.join(" ")}'; the one there is: sandbox image build`, "sandbox");
  }
  if (values["from-host"] && values.debootstrap) throw new UsageError("choose one of --from-host and --debootstrap", "sandbox");
  if ((values["from-host"] || values.debootstrap) && values.dockerfile) throw new UsageError(`${values.debootstrap ? "--debootstrap" : "--from-host"} builds without a Dockerfile; drop --dockerfile`, "sandbox");
  if ((values.suite || values.mirror) && !values.debootstrap) throw new UsageError("--suite and --mirror go with --debootstrap", "sandbox");
  const buildArgs: Record<string, string> = {};
  for (const pair of values["build-arg"] ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--build-arg expects KEY=VALUE, got '${pair}'`, "sandbox");
    buildArgs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const common = commonOptions(values);
  const tag = values.tag?.trim() || defaultImageTag(common);
  const log = (line: string) => term.line(term.style("gray", `  ${line}`));
  let built: BuiltImage;
  try {
    if (values.debootstrap) {
      term.line(`Building ${tag} with debootstrap from the apt mirror (no image registry needed)…`);
      built = await buildImageFromDebootstrap({ tag, force: !!values.force, suite: values.suite, mirror: values.mirror, log });
    } else if (values["from-host"]) {
      term.line(`Building ${tag} from this host's programs (no registry needed)…`);
      built = await buildImageFromHost({ tag, force: !!values.force, log });
    } else {
      term.line(`Building ${tag} from ${values.dockerfile ?? SANDBOX_DOCKERFILE}…`);
      built = await buildImageFromDockerfile({ tag, dockerfile: values.dockerfile, buildArgs, log });
    }
  } catch (err) {
    const code = err instanceof DeerFlowError ? ` [${err.code}]` : "";
    term.error(`Error${code}: ${describeError(err)}`);
    if (err instanceof DeerFlowError && (err.code === "docker_unreachable" || err.code === "docker_permission_denied")) {
      term.error("Fix: start dockerd (or point DOCKER_HOST at a running daemon); `deerflow doctor` checks the socket and its permissions.");
    }
    return 1;
  }
  const missing = built.plan?.missingPrograms.length ? ` (not on this host, left out: ${built.plan.missingPrograms.join(", ")})` : "";
  term.line(
    term.style(
      "green",
      built.reused ? `${built.ref} is up to date (${built.id.slice(0, 19)}, ${megabytes(built.sizeBytes)}).` : `Built ${built.ref} (${built.id.slice(0, 19)}, ${megabytes(built.sizeBytes)})${missing}.`,
    ),
  );
  if (tag !== DEFAULT_SANDBOX_IMAGE && tag !== defaultImageTag(common)) term.line(`Use it with sandbox.image: ${tag} in config.yaml.`);
  return 0;
}
