import { z } from "zod";
import { SAFE_ID } from "../ids";

/**
 * The wire format between a remote sandbox client and a provisioner, shared
 * by both sides so they validate the same shapes.
 *
 * Management API (guarded by `X-API-Key`), DeerFlow's provisioner contract:
 * `POST /api/sandboxes`, `GET /api/sandboxes`, `GET|DELETE /api/sandboxes/{id}`.
 *
 * Command API, served at each sandbox's `sandbox_url` and guarded by that
 * sandbox's own token (`X-Sandbox-Token`): `GET /v1/sandbox`, `POST /v1/exec`,
 * `POST /v1/exec/{exec_id}/cancel`, `POST /v1/file/{read,write,list,glob,grep,stat}`.
 * Paths are virtual (`/mnt/user-data/…`); the serving side applies the path guards.
 */

/** Header carrying the provisioner's API key on management routes. */
export const API_KEY_HEADER = "X-API-Key";
/** Header carrying a sandbox's own token on its command API. */
export const SANDBOX_TOKEN_HEADER = "X-Sandbox-Token";

/**
 * A provisioner sandbox id: a DNS-1123 label short enough for `sandbox-{id}-svc`
 * (Kubernetes names ≤ 63 characters), e.g. DeerFlow's 16 hex digits.
 */
export const PROVISIONER_SANDBOX_ID = /^[a-z0-9](?:[a-z0-9-]{0,49}[a-z0-9])?$/;

/** DeerFlow's Pod phases plus `NotFound`. */
export const SANDBOX_STATUSES = ["Pending", "Running", "Succeeded", "Failed", "Unknown", "NotFound"] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/** One extra mount asked of the provisioner (it decides whether to honour it). */
export const extraMountSchema = z.object({
  host_path: z.string().min(1),
  container_path: z.string().min(1),
  read_only: z.boolean().default(false),
});
export type ExtraMount = z.output<typeof extraMountSchema>;

/** `POST /api/sandboxes` body. Unknown DeerFlow fields (`include_legacy_skills`, …) are accepted and ignored. */
export const createSandboxRequestSchema = z
  .object({
    sandbox_id: z.string().regex(PROVISIONER_SANDBOX_ID, "sandbox_id must be 1-51 lowercase letters, digits or '-'"),
    thread_id: z.string().regex(SAFE_ID).nullish(),
    user_id: z.string().regex(SAFE_ID).default("default"),
    extra_mounts: z.array(extraMountSchema).max(10).nullish().transform((m) => m ?? []),
  })
  .passthrough();
export type CreateSandboxRequest = z.output<typeof createSandboxRequestSchema>;

/** A sandbox as the management API describes it. */
export const sandboxInfoSchema = z.object({
  sandbox_id: z.string(),
  sandbox_url: z.string().min(1),
  status: z.string(),
});
export type SandboxInfo = z.output<typeof sandboxInfoSchema>;

/** `POST /api/sandboxes` answer: the info plus the sandbox's token (only ever sent here). */
export const createSandboxResponseSchema = sandboxInfoSchema.extend({ sandbox_token: z.string().min(16).optional() });
export type CreateSandboxResponse = z.output<typeof createSandboxResponseSchema>;

/** `GET /api/sandboxes` answer. */
export const listSandboxesResponseSchema = z.object({ sandboxes: z.array(sandboxInfoSchema), count: z.number().int() });
export type ListSandboxesResponse = z.output<typeof listSandboxesResponseSchema>;

/** An exec id: random, chosen by the client so it can cancel a command still in flight. */
export const EXEC_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** `POST /v1/exec` body. */
export const execRequestSchema = z.object({
  command: z.string().min(1),
  timeout_ms: z.number().int().positive().optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
  exec_id: z.string().regex(EXEC_ID).optional(),
});
export type ExecRequest = z.output<typeof execRequestSchema>;

/** `POST /v1/exec` answer. */
export const execResponseSchema = z.object({
  stdout: z.string(),
  stderr: z.string(),
  exit_code: z.number().int(),
  timed_out: z.boolean(),
  truncated: z.boolean(),
});
export type ExecResponse = z.output<typeof execResponseSchema>;

const virtualPath = z.string().min(1);

export const fileReadRequestSchema = z.object({ path: virtualPath });
export const fileReadResponseSchema = z.object({ content_base64: z.string() });
export const fileWriteRequestSchema = z.object({ path: virtualPath, content_base64: z.string(), append: z.boolean().default(false) });
export const fileListRequestSchema = z.object({ path: virtualPath, max_depth: z.number().int().min(1).max(32).default(2) });
export const fileListResponseSchema = z.object({
  entries: z.array(z.object({ path: z.string(), is_dir: z.boolean(), depth: z.number().int() })),
});
export const fileGlobRequestSchema = z.object({
  path: virtualPath,
  pattern: z.string().min(1),
  include_dirs: z.boolean().default(false),
  max_results: z.number().int().min(1).max(10_000).default(200),
});
export const fileGlobResponseSchema = z.object({ items: z.array(z.string()), truncated: z.boolean() });
export const fileGrepRequestSchema = z.object({
  path: virtualPath,
  pattern: z.string().min(1),
  glob: z.string().min(1).optional(),
  literal: z.boolean().default(false),
  case_sensitive: z.boolean().default(false),
  max_results: z.number().int().min(1).max(10_000).default(100),
});
export const fileGrepResponseSchema = z.object({
  items: z.array(z.object({ path: z.string(), line: z.number().int(), text: z.string() })),
  truncated: z.boolean(),
});
export const fileStatRequestSchema = z.object({ path: virtualPath });
export const fileStatResponseSchema = z.object({
  stat: z.object({ is_file: z.boolean(), is_dir: z.boolean(), size: z.number(), mtime_ms: z.number() }).nullable(),
});

/** Error body of both APIs: FastAPI's `detail` plus a stable `code` (a SandboxError code on the command API). */
export const errorBodySchema = z.object({ detail: z.unknown(), code: z.string().optional() });

/** Largest file the command API reads or writes in one call. */
export const MAX_REMOTE_FILE_BYTES = 64 * 1024 * 1024;
