import { SandboxError } from "../errors";
import type { Sandbox, SandboxProvider } from "./types";

/** The per-run fields a lease needs (both `Runtime.context` and `ToolRuntime.context` fit). */
export interface LeaseContext {
  readonly identity: { readonly threadId: string; readonly userId: string };
  /** DeerFlow's `runtime.context["sandbox_id"]`: written once the lease is taken. */
  sandbox_id?: unknown;
  [key: string]: unknown;
}

interface Lease {
  provider: SandboxProvider;
  id: Promise<string>;
}

/** One lease per run context object (a sub-agent has its own context, hence its own lease). */
const leases = new WeakMap<object, Lease>();

/**
 * The sandbox of the current run, acquired lazily: the first call takes a
 * lease (recorded against this context object and written to
 * `context.sandbox_id`), later calls reuse it. Release it with
 * {@link releaseRunSandbox} when the run ends (the Sandbox middleware does).
 */
export async function ensureRunSandbox(provider: SandboxProvider, context: LeaseContext): Promise<Sandbox> {
  let lease = leases.get(context);
  if (!lease || lease.provider !== provider) {
    const { threadId, userId } = context.identity;
    const id = provider.acquire(threadId, { userId });
    lease = { provider, id };
    leases.set(context, lease);
    id.catch(() => {
      if (leases.get(context) === lease) leases.delete(context);
    });
  }
  const id = await lease.id;
  context.sandbox_id = id;
  const sandbox = provider.get(id);
  if (!sandbox) {
    leases.delete(context);
    throw new SandboxError(`Sandbox ${id} is no longer available`, { code: "sandbox_unavailable" });
  }
  return sandbox;
}

/** The sandbox id this run holds a lease on, if any (no acquisition). */
export async function runSandboxId(context: LeaseContext): Promise<string | undefined> {
  const lease = leases.get(context);
  if (!lease) return undefined;
  try {
    return await lease.id;
  } catch {
    return undefined;
  }
}

/** Drop this run's lease (no-op when it never acquired one). */
export async function releaseRunSandbox(context: LeaseContext): Promise<void> {
  const lease = leases.get(context);
  if (!lease) return;
  leases.delete(context);
  let id: string;
  try {
    id = await lease.id;
  } catch {
    return;
  }
  await lease.provider.release(id);
}
