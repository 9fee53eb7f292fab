import { existsSync } from "node:fs";
import { SandboxError } from "../errors";
import { scrubEnv } from "./env-policy";
import { MappedSandbox } from "./mapped-sandbox";
import type { MappedSandboxInit } from "./mapped-sandbox";
import { LOCAL_HOST_BASH_DISABLED_MESSAGE } from "./messages";
import { spawnCapped } from "./spawn-capped";
import type { ExecuteOptions, ExecuteResult } from "./types";

/** Options of {@link LocalSandbox}. */
export interface LocalSandboxInit extends MappedSandboxInit {
  allowHostBash: boolean;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  environment: Record<string, string>;
}

/**
 * A sandbox with **no isolation**: files are confined by path resolution
 * (realpath, O_NOFOLLOW), but an enabled host bash runs as the service user
 * with full access to the host. Host bash is therefore refused unless
 * `sandbox.allow_host_bash: true`.
 */
export class LocalSandbox extends MappedSandbox {
  readonly kind = "local";
  readonly isolated = false;
  private readonly opts: LocalSandboxInit;

  constructor(init: LocalSandboxInit) {
    super(init);
    this.opts = init;
  }

  /** Replace virtual path prefixes in a command by host paths (best effort, not a security boundary). */
  private toHostCommand(command: string): string {
    let out = command;
    for (const m of this.mapper.list()) {
      const re = new RegExp(`${m.virtual.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=/|\\b|$)`, "g");
      out = out.replace(re, m.host);
    }
    return out;
  }

  async executeCommand(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    if (!this.opts.allowHostBash) {
      throw new SandboxError(LOCAL_HOST_BASH_DISABLED_MESSAGE, { code: "host_bash_disabled" });
    }
    await this.init();
    const env: Record<string, string> = {
      ...scrubEnv(process.env),
      ...this.opts.environment,
      ...(options.env ?? {}),
      HOME: this.dirs.workspace,
      PWD: this.dirs.workspace,
    };
    const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
    const res = await this.withCommandSignal(options.signal, (signal) =>
      spawnCapped([shell, "-c", this.toHostCommand(command)], {
        cwd: this.dirs.workspace,
        env,
        timeoutMs: options.timeoutMs ?? this.opts.defaultTimeoutMs,
        signal,
        maxOutputBytes: this.opts.maxOutputBytes,
      }),
    );
    return { ...res, stdout: this.maskPaths(res.stdout), stderr: this.maskPaths(res.stderr) };
  }
}
