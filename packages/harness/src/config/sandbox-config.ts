import { z } from "zod";
import { ConfigError } from "../errors";
import { networkSettingSchema } from "./sandbox-network-config";

/** One custom mount: a host directory visible at `container_path`. */
export const mountSchema = z.object({
  host_path: z.string().min(1),
  container_path: z
    .string()
    .regex(/^\/[^\0]*$/, "container_path must be absolute")
    .refine((p) => !p.split("/").includes(".."), "container_path must not contain '..'"),
  read_only: z.boolean().default(false),
});

/** A custom mount after validation. */
export type SandboxMount = z.output<typeof mountSchema>;

const GiB = 1024 * 1024 * 1024;

/**
 * Per-sandbox resource limits of bwrap commands (0 disables one). Processes,
 * memory and CPU use a cgroup per sandbox where the machine allows it, else
 * per-process rlimits (see `limits/` and docs/sandbox.md).
 */
export const limitsSchema = z
  .object({
    /** RLIMIT_CPU: CPU seconds per process. */
    cpu_seconds: z.number().int().min(0).default(600),
    /** RLIMIT_FSIZE: largest file a command may write. */
    file_size_bytes: z.number().int().min(0).default(GiB),
    /** RLIMIT_NOFILE. */
    open_files: z.number().int().min(0).default(1024),
    /** Max processes (tasks) of one sandbox: cgroup `pids.max`; without a pids cgroup, RLIMIT_NPROC of the (shared) sandbox uid. */
    processes: z.number().int().min(0).default(256),
    /** Address-space cap in bytes (0 = unlimited; many runtimes reserve large virtual ranges). Without a memory cgroup, `memory_bytes` is applied this way. */
    address_space_bytes: z.number().int().min(0).default(0),
    /** Memory (RAM + swap, incl. the `/tmp` tmpfs) of one sandbox: cgroup memory limit. */
    memory_bytes: z.number().int().min(0).default(2 * GiB),
    /** CPU share of one sandbox in cores (cgroup CPU quota; 0.5 = half a core). */
    cpu_cores: z.number().min(0).default(1),
    /** Size of the sandbox's `/tmp` (a RAM tmpfs). */
    tmp_size_bytes: z.number().int().min(0).default(GiB),
    /** Disk used by one thread's workspace, uploads and outputs together. */
    disk_quota_bytes: z.number().int().min(0).default(5 * GiB),
  })
  .prefault({});

/**
 * The `sandbox:` section of config.yaml. The container keys (`image`,
 * `replicas`, `idle_timeout`, `container_prefix`…) are read by the Docker
 * provider; other providers' keys are accepted and ignored.
 */
export const sandboxConfigSchema = z
  .object({
    use: z.string().min(1).optional(),
    allow_host_bash: z.boolean().default(false),
    mounts: z.array(mountSchema).nullish().transform((m) => m ?? []),
    bash_output_max_chars: z.number().int().min(0).default(20000),
    read_file_output_max_chars: z.number().int().min(0).default(50000),
    ls_output_max_chars: z.number().int().min(0).default(20000),
    /** Seconds a single bash command may run (default 600). */
    bash_command_timeout: z.number().positive().default(600),
    /** bwrap: `isolated` (default, also `false`), `open` (also `true`), `allowlist`, or `{mode, allow, allow_private}` (see `sandbox-network-config.ts`). */
    network: networkSettingSchema,
    /** bwrap: uid/gid commands run as when the service runs as root (default 65534 = nobody). */
    run_as_uid: z.number().int().min(1).default(65534),
    run_as_gid: z.number().int().min(1).optional(),
    /** bwrap: bytes of stdout/stderr kept per command (head + tail). */
    max_output_bytes: z.number().int().min(1024).default(1024 * 1024),
    limits: limitsSchema,
    /** docker: image of the sandbox containers (any image with `/bin/sh` and `sleep`; never pulled). */
    image: z.string().min(1).nullish(),
    /** docker: accepted for DeerFlow configs; unused (commands go through the Engine API's exec, no port is published). */
    port: z.number().int().min(1).max(65535).nullish(),
    /** docker: containers kept ready — idle ones of released threads plus pre-created ones for new threads (0 = none). */
    replicas: z.number().int().min(0).nullish().transform((r) => r ?? 3),
    /** docker: seconds after a thread's last lease ended before its container is removed (0 = only at shutdown). */
    idle_timeout: z.number().min(0).nullish().transform((t) => t ?? 600),
    /** docker: container names are `{container_prefix}-{16 hex of sha256(user:thread)}`. */
    container_prefix: z
      .string()
      .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,100}$/, "container_prefix must be a valid Docker name prefix ([a-zA-Z0-9][a-zA-Z0-9_.-]*)")
      .nullish()
      .transform((p) => p ?? "deer-flow-sandbox"),
    /** docker: accepted for DeerFlow configs; a local Docker sandbox always shares the thread dirs through bind mounts. */
    thread_data_mounts: z.boolean().nullish(),
    /** Extra environment variables exposed to commands (explicit allow-list). */
    environment: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).nullish().transform((e) => e ?? {}),
  })
  .passthrough();

/** Parsed sandbox configuration. */
export type SandboxConfig = z.output<typeof sandboxConfigSchema>;
/** Sandbox configuration as written in config.yaml. */
export type SandboxConfigInput = z.input<typeof sandboxConfigSchema>;

/** Parse a `sandbox:` section (undefined/null → defaults). */
export function parseSandboxConfig(raw: unknown): SandboxConfig {
  const result = sandboxConfigSchema.safeParse(raw ?? {});
  if (!result.success) {
    const text = result.error.issues.map((i) => `sandbox.${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`Invalid sandbox config: ${text}`, { code: "sandbox_config_invalid" });
  }
  return result.data;
}
