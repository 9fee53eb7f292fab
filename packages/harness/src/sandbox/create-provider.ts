import { SandboxError } from "../errors";
import { BwrapSandboxProvider, sandboxRunAs } from "./bwrap-provider";
import { prefetchBwrapDataDirProbe, probeBwrapDataDir } from "./bwrap/data-dir-probe";
import { parseSandboxConfig } from "../config/sandbox-config";
import type { SandboxConfig } from "../config/sandbox-config";
import { DOCKER_PROVIDER_NAMES, DockerSandboxProvider } from "./docker/docker-provider";
import { LocalSandboxProvider } from "./local-provider";
import { LOCAL_NO_ISOLATION_WARNING } from "./messages";
import { createRemoteSandboxProvider, usesProvisioner } from "./remote";
import type { SandboxProvider } from "./types";

/** Options of {@link createSandboxProvider}. */
export interface CreateSandboxProviderOptions {
  /** Runtime home (DEER_FLOW_HOME); thread data goes under `{baseDir}/users/…`. */
  baseDir: string;
  /** Host skills directory, or a per-user one (see the providers' `skillsPath`). */
  skillsPath?: string | ((userId: string) => string);
  skillsContainerPath?: string;
  /**
   * Where the providers' warnings go (default console.warn): complete lines, each already starting with
   * `[deerflow]`, so a sink must not add the prefix again.
   */
  warn?(message: string): void;
}

/** `sandbox.use` values that select the local provider. */
export const LOCAL_PROVIDER_NAMES = new Set([
  "local",
  "deerflow.sandbox.local:LocalSandboxProvider",
  "deerflow.sandbox.local.local_sandbox_provider:LocalSandboxProvider",
]);

/** `sandbox.use` values that select the bubblewrap provider. */
export const BWRAP_PROVIDER_NAMES = new Set(["bwrap", "bubblewrap"]);

/**
 * Instantiate the provider selected by `sandbox.use`: `local` (or DeerFlow's
 * LocalSandboxProvider class path), `bwrap`; with no `use`, bwrap when it
 * works on this machine with this data dir, else local with a warning; `docker` (or DeerFlow's
 * AioSandboxProvider class path) for a container per thread. Other DeerFlow providers (e2b, …) raise
 * a SandboxError here, at start-up, not at the first run.
 */
export function createSandboxProvider(
  rawConfig: unknown,
  options: CreateSandboxProviderOptions,
): SandboxProvider {
  const config: SandboxConfig = parseSandboxConfig(rawConfig);
  const use = config.use?.trim();
  const providerOptions = { baseDir: options.baseDir, skillsPath: options.skillsPath, skillsContainerPath: options.skillsContainerPath };
  // `provisioner_url` selects the remote backend (DeerFlow's AioSandboxProvider in Kubernetes mode), unless `use` names a host tier.
  if (usesProvisioner(config) && !(use && (LOCAL_PROVIDER_NAMES.has(use) || BWRAP_PROVIDER_NAMES.has(use)))) {
    return createRemoteSandboxProvider(config, { baseDir: options.baseDir, warn: options.warn });
  }
  if (use === undefined || use === "" || use === "auto") {
    if (probeBwrapDataDir({ baseDir: options.baseDir, runAs: sandboxRunAs(config) }).ok) return new BwrapSandboxProvider(config, providerOptions);
    (options.warn ?? console.warn)(LOCAL_NO_ISOLATION_WARNING);
    return new LocalSandboxProvider(config, providerOptions);
  }
  if (LOCAL_PROVIDER_NAMES.has(use)) return new LocalSandboxProvider(config, providerOptions);
  if (BWRAP_PROVIDER_NAMES.has(use)) return new BwrapSandboxProvider(config, providerOptions);
  if (DOCKER_PROVIDER_NAMES.has(use)) return new DockerSandboxProvider(config, { ...providerOptions, log: options.warn });
  throw new SandboxError(`Sandbox provider '${use}' is not supported yet; use 'local', 'bwrap' or 'docker'`, {
    code: "sandbox_provider_unsupported",
    details: { use },
  });
}

/**
 * Start, without waiting, the bwrap check {@link createSandboxProvider} will need for this config
 * (`use` unset, `auto` or bwrap), so that it overlaps the rest of a start-up; the factory then
 * answers from the check's cache. Resolves when the check is done; never rejects (a config that does
 * not parse, or a check that fails, is reported by the factory itself).
 */
export async function prefetchSandboxProvider(rawConfig: unknown, options: { baseDir: string }): Promise<void> {
  let config: SandboxConfig;
  try {
    config = parseSandboxConfig(rawConfig);
  } catch {
    return;
  }
  const use = config.use?.trim();
  const auto = use === undefined || use === "" || use === "auto";
  if (!auto && !(use && BWRAP_PROVIDER_NAMES.has(use))) return;
  if (auto && usesProvisioner(config)) return;
  await prefetchBwrapDataDirProbe({ baseDir: options.baseDir, runAs: sandboxRunAs(config) });
}
