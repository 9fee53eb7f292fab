import { SandboxError } from "../../errors";
import type { DeerFlowErrorOptions } from "../../errors";

/**
 * Stable codes of Docker failures. Callers (provider, doctor, provisioner)
 * branch on these, never on message text.
 */
export type DockerErrorCode =
  /** No daemon answers at the endpoint (socket missing, connection refused, DNS/TCP failure). */
  | "docker_unreachable"
  /** The socket exists but this process may not open it (not in the `docker` group, wrong mode). */
  | "docker_permission_denied"
  /** The configured image is not present locally (the provider never pulls). */
  | "docker_image_missing"
  /** The container does not exist (removed, never created). */
  | "docker_container_missing"
  /** The container exists but is not running (killed, OOM at pid 1, daemon restart). */
  | "docker_container_not_running"
  /** A name is already taken, or the container is being removed. */
  | "docker_conflict"
  /** A request took longer than the client's deadline. */
  | "docker_timeout"
  /** The optional dockerode package is not installed next to the harness. */
  | "docker_client_missing"
  /** Any other Engine API error (message carries the daemon's text). */
  | "docker_api_error";

/** A failure talking to the Docker Engine; `code` is one of {@link DockerErrorCode}. */
export class DockerError extends SandboxError {
  declare readonly code: DockerErrorCode;
  constructor(message: string, options: DeerFlowErrorOptions & { code: DockerErrorCode }) {
    super(message, options);
  }
}

/** Replace `user:password@` in an endpoint URL so it can be shown and logged. */
export function maskEndpoint(endpoint: string): string {
  return endpoint.replace(/\/\/[^/@\s]*@/, "//***@");
}

interface RawDockerError {
  code?: string;
  statusCode?: number;
  json?: { message?: string } | null;
  reason?: string;
  message?: string;
}

/**
 * Map an error from dockerode / docker-modem to a {@link DockerError}:
 * socket errors by errno, API answers by HTTP status. `what` names the
 * operation and object ("inspect image python:3.12").
 */
export function toDockerError(err: unknown, what: string, endpoint: string, extra: Record<string, unknown> = {}): DockerError {
  if (err instanceof DockerError) return err;
  const e = (err ?? {}) as RawDockerError;
  const where = maskEndpoint(endpoint);
  const daemonText = (e.json && typeof e.json === "object" && e.json.message) || e.reason || e.message || String(err);
  if (e.code === "EACCES" || e.code === "EPERM") {
    return new DockerError(
      `Permission denied opening the Docker socket at ${where} (${what}): run the server as a user in the 'docker' group or point DOCKER_HOST at a socket it may use`,
      { code: "docker_permission_denied", cause: err, details: { endpoint: where, ...extra } },
    );
  }
  if (e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "ECONNRESET" || e.code === "EHOSTUNREACH" || e.code === "ENOTFOUND" || e.code === "EPIPE") {
    return new DockerError(`Docker daemon is not reachable at ${where} (${what}): ${e.code}; is dockerd running, and is DOCKER_HOST right?`, {
      code: "docker_unreachable",
      cause: err,
      details: { endpoint: where, errno: e.code, ...extra },
    });
  }
  if (e.code === "ETIMEDOUT" || /timeout/i.test(e.message ?? "")) {
    return new DockerError(`Docker request timed out (${what}) at ${where}`, { code: "docker_timeout", cause: err, details: { endpoint: where, ...extra } });
  }
  if (e.statusCode === 404) {
    return new DockerError(`Docker: not found (${what}): ${daemonText}`, { code: "docker_container_missing", cause: err, details: { endpoint: where, ...extra } });
  }
  if (e.statusCode === 409) {
    return new DockerError(`Docker: conflict (${what}): ${daemonText}`, { code: "docker_conflict", cause: err, details: { endpoint: where, ...extra } });
  }
  return new DockerError(`Docker API error (${what}): ${daemonText}`, {
    code: "docker_api_error",
    cause: err,
    details: { endpoint: where, status: e.statusCode, ...extra },
  });
}
