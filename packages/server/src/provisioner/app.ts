import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Context } from "hono";
import type { z } from "zod";
import {
  API_KEY_HEADER,
  createSandboxRequestSchema,
  DeerFlowError,
  execRequestSchema,
  fileGlobRequestSchema,
  fileGrepRequestSchema,
  fileListRequestSchema,
  fileReadRequestSchema,
  fileStatRequestSchema,
  fileWriteRequestSchema,
  MAX_REMOTE_FILE_BYTES,
  PROVISIONER_SANDBOX_ID,
  SANDBOX_TOKEN_HEADER,
  SandboxError,
  VIRTUAL_WORKSPACE,
} from "@deerflow-ts/harness";
import type { BackendSandbox, ProvisionerBackend } from "./backend";
import type { IdleExpiry } from "./idle-expiry";
import { SandboxFiles } from "./sandbox-files";
import { constantTimeEqual, SandboxTokens } from "./tokens";

/** What the provisioner app needs. */
export interface ProvisionerAppOptions {
  backend: ProvisionerBackend;
  /** Required on every `/api/*` call as `X-API-Key`. */
  apiKey: string;
  /** Base URL callers reach this service at (or a getter, when it is known only once listening); each sandbox_url is `{publicUrl}/sandboxes/{id}`. */
  publicUrl: string | (() => string);
  tokens: SandboxTokens;
  /** Longest command a caller may ask for (ms); longer requests are cut to it. */
  maxCommandTimeoutMs: number;
  /** Bytes of stdout/stderr kept per command (head + tail). */
  maxOutputBytes: number;
  /** Extra environment of every command (`sandbox.environment`). */
  environment?: Record<string, string>;
  /** One line per management action (never a token or key). */
  log?(line: string): void;
  /** Told of every request naming a sandbox, so idle ones are deleted (see idle-expiry.ts); none expire without it. */
  expiry?: IdleExpiry;
}

/** HTTP status of a sandbox error code on the command API. */
function statusOf(code: string): 400 | 403 | 404 | 409 | 413 | 500 | 503 {
  switch (code) {
    case "path_access_denied":
      return 403;
    case "file_not_found":
    case "sandbox_not_found":
      return 404;
    case "is_directory":
    case "not_directory":
    case "invalid_pattern":
    case "pattern_too_slow":
    case "extra_mounts_unsupported":
    case "invalid_request":
      return 400;
    case "file_too_large":
    case "no_space":
      return 413;
    case "sandbox_not_running":
      return 409;
    case "docker_unreachable":
    case "kubernetes_unreachable":
      return 503;
    default:
      return 500;
  }
}

/** Docker/Kubernetes errors that mean "this sandbox is gone or stopped": the caller re-creates it. */
const GONE = new Set(["docker_container_missing", "docker_container_not_running", "sandbox_not_running", "kubernetes_pod_missing"]);

function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof DeerFlowError) {
    const code = GONE.has(err.code) ? "sandbox_not_found" : err.code;
    return c.json({ detail: err.message, code }, statusOf(code));
  }
  return c.json({ detail: "Internal provisioner error", code: "provisioner_error" }, 500);
}

async function body<T extends z.ZodType>(c: Context, schema: T): Promise<z.output<T>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new SandboxError("Request body must be JSON", { code: "invalid_request" });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SandboxError(`Invalid request: ${issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "malformed"}`, { code: "invalid_request" });
  }
  return parsed.data;
}

/**
 * The provisioner's HTTP app (Hono). Management API under `/api/sandboxes`
 * (DeerFlow's contract, `X-API-Key`), and each sandbox's command API under
 * `/sandboxes/{id}` (its `sandbox_url`), which accepts only that sandbox's
 * own token. Both secrets are compared in constant time.
 */
export function createProvisionerApp(options: ProvisionerAppOptions): Hono {
  const { backend, tokens } = options;
  const log = options.log ?? (() => {});
  const publicUrl = (): string => (typeof options.publicUrl === "function" ? options.publicUrl() : options.publicUrl).replace(/\/+$/, "");
  /** Token nonces of known sandboxes (a cache of the backend's labels/annotations). */
  const known = new Map<string, string>();
  /** Commands in flight by `{sandbox}:{exec_id}`, to cancel. */
  const running = new Map<string, AbortController>();
  const filesOf = new Map<string, SandboxFiles>();
  const app = new Hono();

  const describe = (s: BackendSandbox) => ({ sandbox_id: s.sandboxId, sandbox_url: `${publicUrl()}/sandboxes/${s.sandboxId}`, status: s.status });
  const remember = (s: BackendSandbox) => {
    known.set(s.sandboxId, s.tokenNonce);
    return s;
  };
  const expiry = options.expiry;
  expiry?.onExpired((id) => {
    known.delete(id);
    filesOf.delete(id);
  });

  app.onError((err, c) => errorResponse(c, err));
  // File writes carry up to MAX_REMOTE_FILE_BYTES as base64 in JSON; every other body is small.
  const tooLarge = (c: Context) => c.json({ detail: "Request body too large", code: "file_too_large" }, 413);
  app.use("/sandboxes/:id/v1/file/write", bodyLimit({ maxSize: Math.ceil(MAX_REMOTE_FILE_BYTES * 1.4) + 65536, onError: tooLarge }));
  app.use("*", async (c, next) => (c.req.path.endsWith("/v1/file/write") ? next() : bodyLimit({ maxSize: 1024 * 1024, onError: tooLarge })(c, next)));

  app.get("/health", (c) => c.json({ status: "ok", backend: backend.kind }));

  // ── Management API ────────────────────────────────────────────────
  app.use("/api/*", async (c, next) => {
    const key = c.req.header(API_KEY_HEADER) ?? "";
    if (!options.apiKey || !constantTimeEqual(key, options.apiKey)) {
      log(`provisioner auth rejected: ${c.req.method} ${c.req.path}`);
      return c.json({ detail: "Unauthorized" }, 401);
    }
    await next();
  });

  app.post("/api/sandboxes", async (c) => {
    let req;
    try {
      req = await body(c, createSandboxRequestSchema);
    } catch (err) {
      return c.json({ detail: (err as Error).message }, 422);
    }
    const sandbox = remember(await backend.create(req, SandboxTokens.nonce()));
    expiry?.touch(sandbox.sandboxId);
    log(`sandbox ${sandbox.sandboxId} ready for user ${req.user_id} thread ${req.thread_id ?? "-"} (${sandbox.status})`);
    return c.json({ ...describe(sandbox), sandbox_token: tokens.tokenFor(sandbox.sandboxId, sandbox.tokenNonce) });
  });

  app.get("/api/sandboxes", async (c) => {
    const all = (await backend.list()).map(remember);
    return c.json({ sandboxes: all.map(describe), count: all.length });
  });

  app.get("/api/sandboxes/:id", async (c) => {
    const id = c.req.param("id");
    const sandbox = PROVISIONER_SANDBOX_ID.test(id) ? await backend.get(id) : undefined;
    if (!sandbox) return c.json({ detail: `Sandbox '${id}' not found` }, 404);
    expiry?.touch(id);
    return c.json(describe(remember(sandbox)));
  });

  app.delete("/api/sandboxes/:id", async (c) => {
    const id = c.req.param("id");
    if (!PROVISIONER_SANDBOX_ID.test(id)) return c.json({ detail: `Sandbox '${id}' not found` }, 404);
    known.delete(id);
    filesOf.delete(id);
    expiry?.forget(id);
    for (const [key, ctl] of running) if (key.startsWith(`${id}:`)) ctl.abort();
    const removed = await backend.remove(id);
    log(`sandbox ${id} ${removed ? "deleted" : "was already gone"}`);
    return c.json({ ok: true, sandbox_id: id });
  });

  // ── Command API of one sandbox ────────────────────────────────────
  app.use("/sandboxes/:id/*", async (c, next) => {
    const id = c.req.param("id") ?? "";
    if (!PROVISIONER_SANDBOX_ID.test(id)) return c.json({ detail: "Sandbox not found", code: "sandbox_not_found" }, 404);
    let nonce = known.get(id);
    if (nonce === undefined) {
      const sandbox = await backend.get(id);
      if (sandbox) nonce = remember(sandbox).tokenNonce;
    }
    const presented = c.req.header(SANDBOX_TOKEN_HEADER);
    // An unknown sandbox answers as a wrong token does (no probing of ids); a caller whose sandbox vanished re-creates it on 401.
    if (nonce === undefined || !tokens.verify(id, nonce, presented)) {
      return c.json({ detail: "Invalid or missing sandbox token", code: "sandbox_unauthorized" }, 401);
    }
    // A command runs as long as it takes: its sandbox is in use until the answer is sent.
    expiry?.begin(id);
    try {
      await next();
    } finally {
      expiry?.end(id);
    }
  });

  const files = (id: string): SandboxFiles => {
    let f = filesOf.get(id);
    if (!f) {
      f = new SandboxFiles((argv, o) => backend.execBytes(id, argv, o));
      filesOf.set(id, f);
    }
    return f;
  };

  app.get("/sandboxes/:id/v1/sandbox", async (c) => {
    const sandbox = await backend.get(c.req.param("id"));
    if (!sandbox) throw new SandboxError("Sandbox not found", { code: "sandbox_not_found" });
    return c.json({ sandbox_id: sandbox.sandboxId, status: sandbox.status, home_dir: VIRTUAL_WORKSPACE });
  });

  app.post("/sandboxes/:id/v1/exec", async (c) => {
    const id = c.req.param("id");
    const req = await body(c, execRequestSchema);
    const ctl = new AbortController();
    const onClose = () => ctl.abort();
    // A caller that hangs up (cancelled run) stops its command.
    c.req.raw.signal.addEventListener("abort", onClose, { once: true });
    const key = req.exec_id ? `${id}:${req.exec_id}` : undefined;
    if (key) running.set(key, ctl);
    try {
      const env = Object.entries({ ...(options.environment ?? {}), ...(req.env ?? {}) }).map(([k, v]) => `${k}=${v}`);
      const res = await backend.exec(id, req.command, {
        timeoutMs: Math.min(req.timeout_ms ?? options.maxCommandTimeoutMs, options.maxCommandTimeoutMs),
        env,
        workingDir: VIRTUAL_WORKSPACE,
        signal: ctl.signal,
        maxOutputBytes: options.maxOutputBytes,
      });
      return c.json({ stdout: res.stdout, stderr: res.stderr, exit_code: res.exitCode, timed_out: res.timedOut, truncated: res.truncated });
    } finally {
      c.req.raw.signal.removeEventListener("abort", onClose);
      if (key && running.get(key) === ctl) running.delete(key);
    }
  });

  app.post("/sandboxes/:id/v1/exec/:execId/cancel", (c) => {
    const ctl = running.get(`${c.req.param("id")}:${c.req.param("execId")}`);
    ctl?.abort();
    return c.json({ ok: true, cancelled: ctl !== undefined });
  });

  app.post("/sandboxes/:id/v1/file/read", async (c) => {
    const req = await body(c, fileReadRequestSchema);
    const bytes = await files(c.req.param("id")).readFileBytes(req.path);
    return c.json({ content_base64: bytes.toString("base64") });
  });

  app.post("/sandboxes/:id/v1/file/write", async (c) => {
    const req = await body(c, fileWriteRequestSchema);
    const bytes = Buffer.from(req.content_base64, "base64");
    if (bytes.length > MAX_REMOTE_FILE_BYTES) throw new SandboxError(`File too large: ${req.path}`, { code: "file_too_large" });
    await files(c.req.param("id")).writeFile(req.path, bytes, req.append);
    return c.json({ ok: true });
  });

  app.post("/sandboxes/:id/v1/file/list", async (c) => {
    const req = await body(c, fileListRequestSchema);
    const entries = await files(c.req.param("id")).listDir(req.path, req.max_depth);
    return c.json({ entries: entries.map((e) => ({ path: e.path, is_dir: e.isDir, depth: e.depth })) });
  });

  app.post("/sandboxes/:id/v1/file/glob", async (c) => {
    const req = await body(c, fileGlobRequestSchema);
    return c.json(await files(c.req.param("id")).glob(req.path, req.pattern, { includeDirs: req.include_dirs, maxResults: req.max_results }));
  });

  app.post("/sandboxes/:id/v1/file/grep", async (c) => {
    const req = await body(c, fileGrepRequestSchema);
    return c.json(
      await files(c.req.param("id")).grep(req.path, req.pattern, { glob: req.glob, literal: req.literal, caseSensitive: req.case_sensitive, maxResults: req.max_results }),
    );
  });

  app.post("/sandboxes/:id/v1/file/stat", async (c) => {
    const req = await body(c, fileStatRequestSchema);
    const st = await files(c.req.param("id")).stat(req.path);
    return c.json({ stat: st ? { is_file: st.isFile, is_dir: st.isDir, size: st.size, mtime_ms: st.mtimeMs } : null });
  });

  return app;
}
