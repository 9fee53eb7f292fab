import { ConfigError } from "../errors";
import { AllowlistProvider } from "../guardrails";
import type { GuardrailProvider } from "../guardrails";

const ALLOWLIST_USES = new Set([
  "allowlist",
  "AllowlistProvider",
  "deerflow.guardrails.builtin:AllowlistProvider",
  "deerflow.guardrails.allowlist:AllowlistProvider",
]);

/** Resolve `guardrails.provider` ({use, config}) to a provider instance. */
export function resolveGuardrailProvider(ref: { use?: string | null; config?: Record<string, unknown> | null } | null | undefined): GuardrailProvider {
  if (!ref?.use) throw new ConfigError("guardrails.provider.use: required when guardrails.enabled is true (e.g. deerflow.guardrails.builtin:AllowlistProvider)");
  if (ALLOWLIST_USES.has(ref.use)) return new AllowlistProvider((ref.config ?? {}) as never);
  throw new ConfigError(
    `guardrails.provider.use: unknown provider '${ref.use}'. Supported: ${[...ALLOWLIST_USES].join(", ")}. Custom providers can be passed programmatically (createGuardrailMiddleware).`,
  );
}
