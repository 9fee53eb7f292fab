import { DEFAULT_UPLOAD_LIMITS } from "@deerflow-ts/harness";
import type { ModelEntry, UploadLimits } from "@deerflow-ts/harness";
import type { GatewayContext } from "./context";

/** The config-derived settings routes read on each request. */
export interface AppSettings {
  models: ModelEntry[];
  tokenUsageEnabled: boolean;
  uploads: UploadLimits;
  /** `agents_api.enabled`: the custom-agent routes answer (else 403). */
  agentsApiEnabled: boolean;
}

/**
 * Models, token-usage switch and upload limits as of now: from the runtime's
 * current config when it has one (an edit of config.yaml shows on the next
 * request, no restart), else from the gateway's static options.
 */
export function appSettings(ctx: GatewayContext): AppSettings {
  const config = ctx.runtime.config();
  if (!config) return { models: ctx.options.models, tokenUsageEnabled: ctx.options.tokenUsageEnabled, uploads: ctx.options.uploads, agentsApiEnabled: ctx.options.agentsApiEnabled };
  const uploads = (config.uploads ?? {}) as Record<string, unknown>;
  return {
    models: config.models as ModelEntry[],
    tokenUsageEnabled: config.token_usage?.enabled !== false,
    agentsApiEnabled: (config.agents_api as { enabled?: boolean } | undefined)?.enabled === true,
    uploads: {
      ...DEFAULT_UPLOAD_LIMITS,
      ...Object.fromEntries(Object.entries(uploads).filter(([k, v]) => k in DEFAULT_UPLOAD_LIMITS && typeof v === "number")),
    } as UploadLimits,
  };
}
