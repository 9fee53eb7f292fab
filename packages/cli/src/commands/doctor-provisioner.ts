/**
 * `deerflow doctor` for the remote sandbox backend (`sandbox.provisioner_url`): the provisioner
 * answers its management API and accepts the configured API key. One `GET /api/sandboxes` (the
 * list, which every provisioner of DeerFlow's contract serves and which changes nothing) tells
 * both apart: unreachable, refused key, or not a provisioner at all.
 */
import { BWRAP_PROVIDER_NAMES, LOCAL_PROVIDER_NAMES } from "@deerflow-ts/harness/sandbox";
import { DeerFlowError } from "@deerflow-ts/harness/errors";
import { maskUrl } from "@deerflow-ts/harness/postgres";
import { API_KEY_HEADER, ProvisionerClient, remoteSandboxSettings, usesProvisioner } from "@deerflow-ts/harness/sandbox/remote";
import type { SandboxConfig } from "@deerflow-ts/harness/sandbox";
import type { RemoteSandboxSettings } from "@deerflow-ts/harness/sandbox/remote";
import type { Finding } from "./doctor";

/** Whether the sandbox section selects the remote backend (a provisioner URL, and no host tier named in `use`). */
export function selectsProvisioner(config: SandboxConfig): boolean {
  const use = config.use?.trim() ?? "";
  return usesProvisioner(config) && !LOCAL_PROVIDER_NAMES.has(use) && !BWRAP_PROVIDER_NAMES.has(use);
}

/** `url` as it may be shown: a user name and password, and secret-looking query values, replaced by `***`. */
export function showUrl(url: string): string {
  const masked = maskUrl(url);
  try {
    const u = new URL(masked);
    if (u.username) u.username = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return masked.replace(/\/\/[^/@]*@/, "//***@");
  }
}

const START_FIX = "Start the provisioner (deerflow provisioner --backend docker, with PROVISIONER_API_KEY set) or correct sandbox.provisioner_url in config.yaml.";

/**
 * Findings for `sandbox.provisioner_url` (none when the remote backend is not selected): a
 * malformed key or an unset `$VAR` key, a provisioner that does not answer within `timeoutMs`,
 * one that refuses the key, one that answers something else than the list; ok when the list
 * comes back.
 */
export async function provisionerFindings(config: SandboxConfig, env: Record<string, string | undefined>, timeoutMs: number): Promise<Finding[]> {
  if (!selectsProvisioner(config)) return [];
  const rawUrl = String((config as Record<string, unknown>).provisioner_url);
  let settings: RemoteSandboxSettings;
  try {
    settings = remoteSandboxSettings(config, env);
  } catch (err) {
    return [
      {
        check: "provisioner",
        level: "error",
        message: `sandbox.provisioner_url ${showUrl(rawUrl.trim())}: ${(err as Error).message}`,
        fix: "Fix the sandbox key named above in config.yaml (the API key belongs in sandbox.provisioner_api_key, e.g. $PROVISIONER_API_KEY set in .env).",
      },
    ];
  }
  const where = showUrl(settings.provisionerUrl);
  const client = new ProvisionerClient(settings.provisionerUrl, settings.apiKey);
  try {
    const sandboxes = await client.list(AbortSignal.timeout(timeoutMs));
    return [
      {
        check: "provisioner",
        level: "ok",
        message: `the provisioner at ${where} answers and accepts the API key (${sandboxes.length} sandbox${sandboxes.length === 1 ? "" : "es"} listed)`,
      },
    ];
  } catch (err) {
    // By code, not instanceof: the CLI and the harness may load two copies of the error classes.
    const code = err instanceof Error && typeof (err as { code?: unknown }).code === "string" ? (err as DeerFlowError).code : "";
    const reason = (err as Error).message.split(settings.provisionerUrl).join(where);
    switch (code) {
      case "remote_unauthorized":
        return [
          {
            check: "provisioner",
            level: "error",
            message: settings.apiKey
              ? `the provisioner at ${where} refused the API key in sandbox.provisioner_api_key (sent as ${API_KEY_HEADER})`
              : `the provisioner at ${where} requires an API key, and sandbox.provisioner_api_key is not set`,
            fix: "Set sandbox.provisioner_api_key to the provisioner's PROVISIONER_API_KEY (e.g. provisioner_api_key: $PROVISIONER_API_KEY with the variable in .env).",
          },
        ];
      case "remote_unreachable":
      case "remote_timeout":
        return [{ check: "provisioner", level: "error", message: `no provisioner answers at ${where}: ${reason}`, fix: START_FIX }];
      case "remote_call_cancelled":
        return [{ check: "provisioner", level: "error", message: `the provisioner at ${where} did not answer within ${Math.round(timeoutMs / 1000)} s`, fix: START_FIX }];
      default:
        return [
          {
            check: "provisioner",
            level: "error",
            message: `the service at ${where} does not answer as a sandbox provisioner (GET /api/sandboxes): ${reason}`,
            fix: "Point sandbox.provisioner_url at the provisioner's base URL (deerflow provisioner listens on :8002 by default), not at the gateway or a sandbox.",
          },
        ];
    }
  }
}
