import { createRequire } from "node:module";
import type Docker from "dockerode";

const requireLib = createRequire(import.meta.url);
let dockerode: typeof Docker | undefined;

/**
 * dockerode, required when the first Docker client is made (the Docker
 * sandbox, `deerflow sandbox image build`): with its gRPC and SSH transports
 * it is one of the largest things the harness could load, and a config on the
 * local or bubblewrap sandbox never talks to Docker. It is CommonJS, so the
 * clients stay synchronous to construct.
 */
export function loadDockerode(): typeof Docker {
  dockerode ??= requireLib("dockerode") as typeof Docker;
  return dockerode;
}
