import { z } from "zod";
import { SandboxError } from "../../errors";
import { callJson } from "./http";
import type { JsonCall } from "./http";
import {
  API_KEY_HEADER,
  createSandboxResponseSchema,
  listSandboxesResponseSchema,
  sandboxInfoSchema,
} from "./wire";
import type { CreateSandboxResponse, ExtraMount, SandboxInfo } from "./wire";

/** Timeouts of the management calls (creating a Pod can take a while; the rest are quick). */
const CREATE_TIMEOUT_MS = 120_000;
const QUERY_TIMEOUT_MS = 15_000;

/** What a sandbox is created for. */
export interface ProvisionRequest {
  sandboxId: string;
  threadId: string;
  userId: string;
  extraMounts?: ExtraMount[];
}

const deleteResponseSchema = z.object({ ok: z.boolean(), sandbox_id: z.string() }).passthrough();

/**
 * Client of a provisioner's management API (DeerFlow's contract:
 * `POST|GET /api/sandboxes`, `GET|DELETE /api/sandboxes/{id}`, `X-API-Key`).
 * Every failure is a SandboxError (see `callJson`); the API key is never part
 * of a message.
 */
export class ProvisionerClient {
  constructor(
    /** Base URL without a trailing slash. */
    readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private headers(): Record<string, string> {
    return this.apiKey ? { [API_KEY_HEADER]: this.apiKey } : {};
  }

  private url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /** One management call; a refused key names the config key to fix. */
  private async call<T extends z.ZodType>(call: JsonCall<T>): Promise<z.output<T> | undefined> {
    try {
      return await callJson(call);
    } catch (err) {
      if (err instanceof SandboxError && err.code === "remote_unauthorized") {
        throw new SandboxError(`${err.message}; check sandbox.provisioner_api_key (sent as ${API_KEY_HEADER})`, { code: err.code, details: err.details });
      }
      throw err;
    }
  }

  /** `POST /api/sandboxes` — idempotent per sandbox id. */
  async create(req: ProvisionRequest, signal?: AbortSignal): Promise<CreateSandboxResponse> {
    const res = await this.call({
      method: "POST",
      url: this.url("/api/sandboxes"),
      headers: this.headers(),
      body: { sandbox_id: req.sandboxId, thread_id: req.threadId, user_id: req.userId, extra_mounts: req.extraMounts ?? [] },
      schema: createSandboxResponseSchema,
      timeoutMs: CREATE_TIMEOUT_MS,
      signal,
      what: "Sandbox provisioner",
    });
    return res as CreateSandboxResponse;
  }

  /** `GET /api/sandboxes/{id}`, or undefined when the provisioner does not know it (404). */
  async get(sandboxId: string, signal?: AbortSignal): Promise<SandboxInfo | undefined> {
    return this.call({
      method: "GET",
      url: this.url(`/api/sandboxes/${encodeURIComponent(sandboxId)}`),
      headers: this.headers(),
      schema: sandboxInfoSchema,
      timeoutMs: QUERY_TIMEOUT_MS,
      signal,
      what: "Sandbox provisioner",
      okStatuses: [404],
    });
  }

  /** `DELETE /api/sandboxes/{id}`; a sandbox already gone (404) counts as deleted. */
  async delete(sandboxId: string, signal?: AbortSignal): Promise<void> {
    await this.call({
      method: "DELETE",
      url: this.url(`/api/sandboxes/${encodeURIComponent(sandboxId)}`),
      headers: this.headers(),
      schema: deleteResponseSchema,
      timeoutMs: QUERY_TIMEOUT_MS,
      signal,
      what: "Sandbox provisioner",
      okStatuses: [404],
    });
  }

  /** `GET /api/sandboxes`. */
  async list(signal?: AbortSignal): Promise<SandboxInfo[]> {
    const res = await this.call({
      method: "GET",
      url: this.url("/api/sandboxes"),
      headers: this.headers(),
      schema: listSandboxesResponseSchema,
      timeoutMs: QUERY_TIMEOUT_MS,
      signal,
      what: "Sandbox provisioner",
    });
    return res?.sandboxes ?? [];
  }
}
