import type { ModelEntry, RunHandle } from "@deerflow-ts/harness";
import type { GatewayContext } from "../context";
import { toRunRequest } from "./run-request";
import type { RunCreateRequest } from "./run-request";

/** The configured models now (the runtime's config follows edits of config.yaml). */
function currentModels(ctx: GatewayContext): ModelEntry[] {
  const config = ctx.runtime.config();
  return config ? (config.models as ModelEntry[]) : ctx.options.models;
}

/**
 * Create a run from a validated body: parse it into the harness's typed
 * request and hand it to the runtime's run service. Client mistakes throw
 * HttpError; the service's refusals are RunServiceErrors (mapped to HTTP by
 * {@link runServiceHttpError}).
 */
export function createRun(ctx: GatewayContext, threadId: string, req: RunCreateRequest, userId: string, options: { waitForStore: boolean }): Promise<RunHandle> {
  const request = toRunRequest(req, { threadId, userId, models: currentModels(ctx), maxRecursionLimit: ctx.options.maxRecursionLimit });
  return ctx.runs.create(request, options);
}
