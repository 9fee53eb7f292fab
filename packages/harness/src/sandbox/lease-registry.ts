import { SandboxError } from "../errors";
import { DEFAULT_USER_ID, validateId } from "./ids";
import type { AcquireOptions, Sandbox, SandboxProvider } from "./types";

/** A sandbox the registry can initialise and tear down. */
export interface ManagedSandbox extends Sandbox {
  init(): Promise<void>;
  dispose(): Promise<void>;
}

interface Entry<T> {
  sandbox: T;
  leases: number;
}

/**
 * Lease bookkeeping shared by host providers: one sandbox per (user, thread),
 * `acquire` increments its lease count, `release` decrements it and the
 * sandbox is disposed when no lease remains.
 */
export abstract class LeaseRegistryProvider<T extends ManagedSandbox> implements SandboxProvider {
  abstract readonly kind: string;
  private readonly entries = new Map<string, Entry<T>>();
  private readonly pending = new Map<string, Promise<T>>();
  private closed = false;

  /** Build (but do not initialise) the sandbox of a thread. */
  protected abstract create(id: string, threadId: string, userId: string): T;

  /** Deterministic id of a (user, thread) sandbox. */
  sandboxId(threadId: string, userId: string = DEFAULT_USER_ID): string {
    return `${this.kind}:${validateId("user", userId)}:${validateId("thread", threadId)}`;
  }

  async acquire(threadId: string, options: AcquireOptions = {}): Promise<string> {
    if (this.closed) throw new SandboxError("Sandbox provider is shut down", { code: "sandbox_provider_closed" });
    const userId = options.userId ?? DEFAULT_USER_ID;
    const id = this.sandboxId(threadId, userId);
    const existing = this.entries.get(id);
    if (existing) {
      existing.leases++;
      return id;
    }
    let creating = this.pending.get(id);
    if (!creating) {
      const sandbox = this.create(id, threadId, userId);
      creating = sandbox.init().then(() => sandbox);
      this.pending.set(id, creating);
      creating.then(
        (s) => {
          this.pending.delete(id);
          this.entries.set(id, { sandbox: s, leases: 0 });
        },
        () => this.pending.delete(id),
      );
    }
    await creating;
    const entry = this.entries.get(id);
    if (!entry) throw new SandboxError(`Sandbox ${id} could not be created`, { code: "sandbox_unavailable" });
    entry.leases++;
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
    if (!entry) return;
    entry.leases = Math.max(0, entry.leases - 1);
    if (entry.leases === 0) {
      this.entries.delete(id);
      await entry.sandbox.dispose();
    }
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.sandbox.dispose()));
  }
}
