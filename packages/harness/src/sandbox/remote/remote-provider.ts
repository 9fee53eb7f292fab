import { createHash } from "node:crypto";
import { SandboxError } from "../../errors";
import type { SandboxConfig } from "../../config/sandbox-config";
import { parseSandboxConfig } from "../../config/sandbox-config";
import { DEFAULT_USER_ID, validateId } from "../ids";
import { ensureThreadDirs, threadDirs } from "../thread-paths";
import type { AcquireOptions, Sandbox, SandboxProvider } from "../types";
import { remoteSandboxSettings } from "./config";
import type { RemoteSandboxSettings } from "./config";
import { ProvisionerClient } from "./provisioner-client";
import { RemoteSandbox } from "./remote-sandbox";
import type { RemoteEndpoint } from "./remote-sandbox";
import { ThreadSync } from "./thread-sync";
import type { CreateSandboxResponse } from "./wire";

/** Options of {@link createRemoteSandboxProvider}. */
export interface RemoteProviderOptions {
  /** Runtime home; the thread's host directories (uploads to push, outputs to pull) are under it. */
  baseDir: string;
  /** Where sync and clean-up failures are reported (default console.warn). Never receives a token or key. */
  warn?(message: string): void;
  /** Environment for `$VAR` keys (default process.env). */
  env?: Record<string, string | undefined>;
}

interface Entry {
  sandbox: RemoteSandbox;
  sync?: ThreadSync;
  leases: number;
  idleTimer?: NodeJS.Timeout;
}

/** The provisioner's sandbox id of a (user, thread): 16 hex digits of sha256("user:thread"), as DeerFlow derives it. */
export function provisionerSandboxId(userId: string, threadId: string): string {
  return createHash("sha256").update(`${userId}:${threadId}`).digest("hex").slice(0, 16);
}

/**
 * Sandboxes created through a provisioner (`sandbox.provisioner_url`): one
 * per (user, thread), shared by the leases of a run and its sub-agents. When
 * the last lease ends the thread's outputs are pulled back (unless
 * `thread_data_mounts`), and the sandbox is deleted `idle_timeout` seconds
 * later unless a run takes it again; `shutdown` deletes every sandbox this
 * provider holds. A provisioner that is down fails the acquire (and so the
 * tool call) with a SandboxError naming it, never the process.
 */
export class RemoteSandboxProvider implements SandboxProvider {
  readonly kind = "remote";
  readonly settings: RemoteSandboxSettings;
  readonly client: ProvisionerClient;
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private closed = false;

  constructor(
    readonly config: SandboxConfig,
    private readonly options: RemoteProviderOptions,
  ) {
    this.settings = remoteSandboxSettings(config, options.env);
    this.client = new ProvisionerClient(this.settings.provisionerUrl, this.settings.apiKey);
  }

  /** False for the remote backend unless `thread_data_mounts: true`: uploads and outputs are copied through the command API. */
  get usesThreadDataMounts(): boolean {
    return this.settings.threadDataMounts;
  }

  private warn(message: string): void {
    (this.options.warn ?? console.warn)(message);
  }

  /** Harness-side id of a (user, thread). */
  sandboxId(threadId: string, userId: string = DEFAULT_USER_ID): string {
    return `remote:${validateId("user", userId)}:${validateId("thread", threadId)}`;
  }

  private endpointOf(res: CreateSandboxResponse): RemoteEndpoint {
    if (!res.sandbox_token) {
      throw new SandboxError(`The provisioner at ${this.client.baseUrl} returned no sandbox_token for ${res.sandbox_id}; it does not protect its sandboxes' command API, which this server refuses to use`, {
        code: "remote_protocol_error",
      });
    }
    return { sandboxUrl: res.sandbox_url.replace(/\/+$/, ""), token: res.sandbox_token };
  }

  private async create(id: string, threadId: string, userId: string): Promise<Entry> {
    const sandboxId = provisionerSandboxId(userId, threadId);
    const extraMounts = this.config.mounts.map((m) => ({ host_path: m.host_path, container_path: m.container_path, read_only: m.read_only }));
    const provision = async (): Promise<RemoteEndpoint> => this.endpointOf(await this.client.create({ sandboxId, threadId, userId, extraMounts }));
    const endpoint = await provision();
    const sandbox = new RemoteSandbox({
      id,
      sandboxId,
      endpoint,
      reconnect: provision,
      defaultTimeoutMs: this.config.bash_command_timeout * 1000,
      environment: this.config.environment,
    });
    let sync: ThreadSync | undefined;
    if (!this.settings.threadDataMounts) {
      const dirs = threadDirs(this.options.baseDir, threadId, userId);
      await ensureThreadDirs(dirs);
      sync = new ThreadSync(dirs, sandbox);
    }
    return { sandbox, sync, leases: 0 };
  }

  async acquire(threadId: string, options: AcquireOptions = {}): Promise<string> {
    if (this.closed) throw new SandboxError("Sandbox provider is shut down", { code: "sandbox_provider_closed" });
    const userId = options.userId ?? DEFAULT_USER_ID;
    const id = this.sandboxId(threadId, userId);
    let entry = this.entries.get(id);
    if (!entry) {
      let creating = this.pending.get(id);
      if (!creating) {
        creating = this.create(id, threadId, userId);
        this.pending.set(id, creating);
        creating.then(
          (e) => {
            this.pending.delete(id);
            this.entries.set(id, e);
          },
          () => this.pending.delete(id),
        );
      }
      entry = await creating;
      entry = this.entries.get(id) ?? entry;
    }
    if (entry.idleTimer) {
      clearTimeout(entry.idleTimer);
      entry.idleTimer = undefined;
    }
    entry.leases++;
    try {
      // Files the user uploaded since the sandbox last saw them: the run must find them at /mnt/user-data/uploads.
      await entry.sync?.pushUploads();
    } catch (err) {
      entry.leases--;
      throw err;
    }
    return id;
  }

  get(id: string): Sandbox | undefined {
    return this.entries.get(id)?.sandbox;
  }

  leaseCount(id: string): number {
    return this.entries.get(id)?.leases ?? 0;
  }

  async release(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.leases === 0) return;
    entry.leases--;
    if (entry.leases > 0) return;
    try {
      await entry.sync?.pullOutputs();
    } catch (err) {
      this.warn(`[deerflow] could not copy the outputs of sandbox ${id} back from the provisioner: ${(err as Error).message}`);
    }
    if (entry.leases > 0 || this.closed) return;
    if (this.settings.idleTimeoutMs === 0) {
      await this.destroy(id, entry);
      return;
    }
    entry.idleTimer = setTimeout(() => {
      entry.idleTimer = undefined;
      if (entry.leases === 0 && this.entries.get(id) === entry) void this.destroy(id, entry);
    }, this.settings.idleTimeoutMs);
    entry.idleTimer.unref();
  }

  private async destroy(id: string, entry: Entry): Promise<void> {
    if (this.entries.get(id) === entry) this.entries.delete(id);
    entry.sandbox.dispose();
    try {
      await this.client.delete(entry.sandbox.sandboxId);
    } catch (err) {
      this.warn(`[deerflow] could not delete sandbox ${entry.sandbox.sandboxId} through the provisioner: ${(err as Error).message}`);
    }
  }

  /**
   * The thread was deleted: DELETE its sandbox at the provisioner now instead of at the idle timeout (no outputs
   * are pulled back: the thread's files are going too). Sent even when this process holds no entry for it, since
   * the sandbox id is derived from (user, thread) and another server process may have created it; a 404 counts as
   * deleted.
   */
  async discardThread(threadId: string, options: AcquireOptions = {}): Promise<void> {
    const userId = options.userId ?? DEFAULT_USER_ID;
    const id = this.sandboxId(threadId, userId);
    await this.pending.get(id)?.catch(() => undefined);
    const entry = this.entries.get(id);
    if (entry) {
      if (entry.idleTimer) clearTimeout(entry.idleTimer);
      entry.idleTimer = undefined;
      entry.leases = 0;
      await this.destroy(id, entry);
      return;
    }
    try {
      await this.client.delete(provisionerSandboxId(userId, threadId));
    } catch (err) {
      this.warn(`[deerflow] sandbox: could not delete the sandbox of deleted thread ${threadId} through the provisioner: ${(err as Error).message}`);
    }
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending.values()]);
    const all = [...this.entries.entries()];
    for (const [, e] of all) if (e.idleTimer) clearTimeout(e.idleTimer);
    await Promise.all(all.map(([id, e]) => this.destroy(id, e)));
  }
}

/**
 * The provider of `sandbox.provisioner_url`: sandboxes created and reached
 * through a provisioner (`deerflow provisioner`, or DeerFlow-compatible ones
 * that hand out per-sandbox tokens).
 * @throws ConfigError when a remote key is malformed or its `$VAR` is unset.
 */
export function createRemoteSandboxProvider(rawConfig: unknown, options: RemoteProviderOptions): RemoteSandboxProvider {
  const config = parseSandboxConfig(rawConfig);
  return new RemoteSandboxProvider(config, options);
}
