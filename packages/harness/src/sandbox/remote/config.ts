import { z } from "zod";
import { ConfigError } from "../../errors";
import { envReferenceName } from "../../config/env";
import type { SandboxConfig } from "../../config/sandbox-config";

/**
 * The `sandbox:` keys of the remote (provisioner) backend, read from the
 * parsed section (its schema passes unknown keys through). DeerFlow's names:
 * `provisioner_url`, `provisioner_api_key`, `thread_data_mounts`, `idle_timeout`.
 */
const remoteKeysSchema = z.object({
  provisioner_url: z
    .string()
    .trim()
    .url("sandbox.provisioner_url must be an http(s) URL, e.g. http://provisioner:8002")
    .refine((u) => /^https?:\/\//i.test(u), "sandbox.provisioner_url must start with http:// or https://")
    // fetch refuses URLs with credentials (and they would end up in messages): the key goes in provisioner_api_key.
    .refine((u) => !/^https?:\/\/[^/]*@/i.test(u), "sandbox.provisioner_url must not contain credentials; put the key in sandbox.provisioner_api_key"),
  provisioner_api_key: z.string().nullish(),
  /** True when the provisioner mounts the same thread directories the server writes (shared storage): no upload/output sync. */
  thread_data_mounts: z.boolean().nullish(),
  /** Seconds a sandbox with no lease stays alive before it is deleted (0 = deleted at once). DeerFlow's default 600. */
  idle_timeout: z.number().min(0).nullish(),
});

/** Resolved remote settings. */
export interface RemoteSandboxSettings {
  /** Provisioner base URL without a trailing slash. */
  provisionerUrl: string;
  /** Sent as `X-API-Key` (resolved from `$VAR`); empty sends no header. */
  apiKey: string;
  /** See `thread_data_mounts` above (default false for the remote backend). */
  threadDataMounts: boolean;
  idleTimeoutMs: number;
}

/**
 * Read the remote keys of a parsed `sandbox:` section. A `$VAR` API key the
 * config loader left unresolved is read from `env`.
 * @throws ConfigError naming the key when a value is malformed or a `$VAR` is unset.
 */
export function remoteSandboxSettings(config: SandboxConfig, env: Record<string, string | undefined> = process.env): RemoteSandboxSettings {
  const parsed = remoteKeysSchema.safeParse(config);
  if (!parsed.success) {
    const text = parsed.error.issues.map((i) => `sandbox.${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`Invalid remote sandbox config: ${text}`, { code: "sandbox_config_invalid" });
  }
  let apiKey = parsed.data.provisioner_api_key ?? "";
  const ref = envReferenceName(apiKey);
  if (ref !== null) {
    const value = env[ref];
    if (value === undefined || value === "") {
      throw new ConfigError(`sandbox.provisioner_api_key refers to $${ref}, which is not set in the environment`, {
        code: "sandbox_config_invalid",
        details: { variable: ref },
      });
    }
    apiKey = value;
  }
  return {
    provisionerUrl: parsed.data.provisioner_url.replace(/\/+$/, ""),
    apiKey,
    threadDataMounts: parsed.data.thread_data_mounts ?? false,
    idleTimeoutMs: (parsed.data.idle_timeout ?? 600) * 1000,
  };
}

/** True when a parsed `sandbox:` section names a provisioner (selects the remote backend). */
export function usesProvisioner(config: SandboxConfig): boolean {
  const url = (config as Record<string, unknown>).provisioner_url;
  return typeof url === "string" && url.trim() !== "";
}
