import type { SandboxConfig } from "../config/sandbox-config";
import { parseSandboxConfig } from "../config/sandbox-config";
import { LeaseRegistryProvider } from "./lease-registry";
import { LocalSandbox } from "./local-sandbox";
import { threadDirs } from "./thread-paths";

/** Options of {@link LocalSandboxProvider}. */
export interface LocalProviderOptions {
  /** Runtime home; thread data lives under `{baseDir}/users/…`. */
  baseDir: string;
  /** Host skills directory mounted read-only at `/mnt/skills`, or one per user (the skills registry's enabled-only view). */
  skillsPath?: string | ((userId: string) => string);
  skillsContainerPath?: string;
}

/**
 * DeerFlow's LocalSandboxProvider: **NO ISOLATION.** File tools are confined
 * to the thread's directories and configured mounts by real-path checks, but
 * host bash (when `allow_host_bash: true`) runs with the service's full
 * privileges; use the bwrap provider for untrusted work.
 */
export class LocalSandboxProvider extends LeaseRegistryProvider<LocalSandbox> {
  readonly kind = "local";
  readonly config: SandboxConfig;

  constructor(
    config: SandboxConfig | undefined,
    private readonly options: LocalProviderOptions,
  ) {
    super();
    this.config = config ?? parseSandboxConfig({});
  }

  protected create(id: string, threadId: string, userId: string): LocalSandbox {
    return new LocalSandbox({
      id,
      dirs: threadDirs(this.options.baseDir, threadId, userId),
      skillsPath: typeof this.options.skillsPath === "function" ? this.options.skillsPath(userId) : this.options.skillsPath,
      skillsContainerPath: this.options.skillsContainerPath,
      mounts: this.config.mounts,
      allowHostBash: this.config.allow_host_bash,
      defaultTimeoutMs: this.config.bash_command_timeout * 1000,
      maxOutputBytes: this.config.max_output_bytes,
      environment: this.config.environment,
    });
  }
}
