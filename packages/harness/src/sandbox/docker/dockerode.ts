import { createRequire } from "node:module";
import type Docker from "dockerode";
import { DockerError } from "./errors";

const requireLib = createRequire(import.meta.url);
let dockerode: typeof Docker | undefined;

/** The dockerode release the Docker tier is built and tested against (an optional peer dependency). */
export const DOCKERODE_VERSION = "5.0.1";

/** Loads a CommonJS module by name; the default is Node's own resolution from this package. */
export type ModuleLoader = (id: string) => unknown;

/**
 * dockerode, required when the first Docker client is made (the Docker
 * sandbox, the provisioner's Docker backend, `deerflow sandbox image build`).
 * With its gRPC and SSH transports it weighs about 15 MB installed, and a
 * config on the local or bubblewrap sandbox never talks to Docker, so it is an
 * optional peer dependency: installed by those who use Docker, with a clear
 * error naming the command for everyone else. It is CommonJS, so the clients
 * stay synchronous to construct.
 * @throws DockerError `docker_client_missing` when the package is not installed.
 */
export function loadDockerode(load: ModuleLoader = requireLib): typeof Docker {
  if (dockerode && load === requireLib) return dockerode;
  let lib: typeof Docker;
  try {
    lib = load("dockerode") as typeof Docker;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new DockerError(
      `The Docker sandbox needs the optional package dockerode, which is not installed: run \`npm install dockerode@${DOCKERODE_VERSION}\` where deerflow-ts is installed (with -g for a global install), or choose another sandbox in config.yaml (sandbox.use)`,
      { code: "docker_client_missing", cause: err },
    );
  }
  if (load === requireLib) dockerode = lib;
  return lib;
}
