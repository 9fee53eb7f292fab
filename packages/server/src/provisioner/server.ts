import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { ConfigError } from "@deerflow-ts/harness";
import type { ProvisionerBackend } from "./backend";
import { createProvisionerApp } from "./app";
import { DEFAULT_PROVISIONER_IDLE_TIMEOUT_S, IdleExpiry } from "./idle-expiry";
import { SandboxTokens } from "./tokens";

/** Options of {@link startProvisioner}. */
export interface StartProvisionerOptions {
  backend: ProvisionerBackend;
  /** `X-API-Key` every management call must carry (DeerFlow's PROVISIONER_API_KEY); at least 16 characters. */
  apiKey: string;
  host?: string;
  /** 0 picks a free port (tests). Default 8002 (DeerFlow's). */
  port?: number;
  /** URL callers reach this service at (default: the listening address). */
  publicUrl?: string;
  /** Keeps sandbox tokens valid across restarts; random per process when absent. */
  tokenSecret?: string;
  /** Longest command (ms); default 600 s. */
  maxCommandTimeoutMs?: number;
  /** Bytes kept per command stream; default 1 MiB. */
  maxOutputBytes?: number;
  environment?: Record<string, string>;
  /**
   * Seconds without any request naming a sandbox after which the provisioner deletes it (its server crashed or
   * forgot it); 0 never. Default 600, the providers' `sandbox.idle_timeout` default.
   */
  idleTimeoutSeconds?: number;
  /** Clock of the idle expiry (tests). */
  now?: () => number;
  log?(line: string): void;
}

/** A running provisioner. */
export interface RunningProvisioner {
  /** Where it listens, e.g. `http://127.0.0.1:8002`. */
  url: string;
  backend: ProvisionerBackend;
  /** The idle expiry (its timer runs while the service does; `sweep()` runs one now). */
  expiry: IdleExpiry;
  /** Stop listening and release the backend's clients (sandboxes stay: they belong to their callers). */
  close(): Promise<void>;
}

/** Minimum length of the API key: a short key is guessable, and the key opens every sandbox's lifecycle. */
export const MIN_API_KEY_LENGTH = 16;

/**
 * Check the backend, then serve the provisioner (management API + every
 * sandbox's command API) on `host:port`.
 * @throws ConfigError for a missing or short API key; the backend's error when it is not usable.
 */
export async function startProvisioner(options: StartProvisionerOptions): Promise<RunningProvisioner> {
  if (!options.apiKey || options.apiKey.length < MIN_API_KEY_LENGTH) {
    throw new ConfigError(`The provisioner needs an API key of at least ${MIN_API_KEY_LENGTH} characters (PROVISIONER_API_KEY); every /api/* call must send it as X-API-Key`, {
      code: "provisioner_api_key_missing",
    });
  }
  await options.backend.start();
  const expiry = new IdleExpiry({
    backend: options.backend,
    idleTimeoutMs: (options.idleTimeoutSeconds ?? DEFAULT_PROVISIONER_IDLE_TIMEOUT_S) * 1000,
    now: options.now,
    log: options.log,
  });
  const host = options.host ?? "127.0.0.1";
  let listening = "";
  const app = createProvisionerApp({
    backend: options.backend,
    apiKey: options.apiKey,
    publicUrl: () => options.publicUrl ?? listening,
    tokens: new SandboxTokens(options.tokenSecret),
    maxCommandTimeoutMs: options.maxCommandTimeoutMs ?? 600_000,
    maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024,
    environment: options.environment,
    log: options.log,
    expiry,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? 8002, hostname: host }, (info: AddressInfo) => {
      listening = `http://${host.includes(":") ? `[${host}]` : host}:${info.port}`;
      resolve(s as Server);
    });
    s.once("error", reject);
  });
  expiry.start();
  return {
    url: listening,
    backend: options.backend,
    expiry,
    async close() {
      expiry.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
      await options.backend.close();
    },
  };
}
