/**
 * What selects and configures the Docker provider: the `sandbox.use` names, the defaults it falls back to,
 * and the options its constructor takes (kept apart from the provider's container lifecycle).
 */
import type { HostResolver } from "../../web-research/ssrf-guard";
import type { DockerEngine } from "./engine";

/** `sandbox.use` values that select the Docker provider (DeerFlow's AIO sandbox class paths and ours). */
export const DOCKER_PROVIDER_NAMES = new Set([
  "docker",
  "deerflow.community.aio_sandbox:AioSandboxProvider",
  "deerflow.community.aio_sandbox.aio_sandbox_provider:AioSandboxProvider",
]);

/** Image used when `sandbox.image` is not set (built by `deerflow sandbox image build`). */
export const DEFAULT_DOCKER_IMAGE = "deerflow-sandbox:latest";

/** Directory under the data dir holding the warm pool's slot dirs, one subdirectory per provider instance. */
export const POOL_DIR = "sandbox-pool";

/** Longest gap between two idle / orphan sweeps. */
export const MAX_SWEEP_INTERVAL_MS = 60_000;

/** Options of {@link DockerSandboxProvider}. */
export interface DockerProviderOptions {
  baseDir: string;
  /** Host skills directory bound read-only at `skillsContainerPath`, or one per user. */
  skillsPath?: string | ((userId: string) => string);
  skillsContainerPath?: string;
  /** Engine client (default: DOCKER_HOST or the default socket). */
  engine?: DockerEngine;
  /** Period of the idle / orphan sweep in ms (default: a quarter of `idle_timeout`, at most 60 s, at least 1 s). */
  sweepIntervalMs?: number;
  /** Resolver of the egress proxy (tests simulate DNS answers with it; default the system resolver). */
  networkResolver?: HostResolver;
  log?(message: string): void;
}
