import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SandboxError } from "../../errors";
import type { BwrapBind } from "../bwrap/argv";
import { searchBlocker } from "../bwrap/staging";
import type { SearchIdentity } from "../bwrap/staging";
import { FORWARDER_SCRIPT, FORWARDER_SCRIPT_NAME, forwarderPrelude, networkBinds, networkEnv, PROXY_SOCKET_NAME } from "./forwarder";
import type { EgressPolicy } from "./policy";
import { EgressProxy } from "./proxy";
import type { EgressProxyOptions } from "./proxy";

/**
 * The parent of the network directories: the system temp dir when it is
 * short enough for a socket path and the sandbox uid can enter it, else `/tmp`.
 */
function netParent(owner: SearchIdentity | undefined): string {
  const tmp = os.tmpdir();
  if (tmp.length > 60) return "/tmp";
  if (owner && searchBlocker(path.join(tmp, "deerflow-net"), owner)) return "/tmp";
  return tmp;
}

/** Options of {@link SandboxEgress}. */
export interface SandboxEgressOptions {
  policy: EgressPolicy;
  /** The sandbox uid/gid (service running as root): owns the socket so only it can connect. */
  owner?: { uid: number; gid: number };
  /** The node binary that runs the forwarder inside the sandbox (default: this process's). */
  nodePath?: string;
  /** Passed to the proxy (limits, diagnostics). */
  proxy?: Pick<EgressProxyOptions, "maxConnections" | "connectTimeoutMs" | "idleTimeoutMs" | "onDecision">;
}

/** What one network-mode command adds to its bwrap invocation. */
export interface EgressCommandParts {
  binds: BwrapBind[];
  env: Record<string, string>;
  /** Shell lines to run before the command. */
  prelude: string;
}

/**
 * The network of one bubblewrap sandbox in `allowlist` / `open` mode: a
 * private directory (short, under the system temp dir: Unix socket paths
 * are limited to 107 bytes) holding the forwarder script and the socket of
 * this sandbox's own {@link EgressProxy}. One proxy per sandbox, started on
 * its first command and closed with it, so one thread's connections count
 * against its own cap, never another thread's.
 */
export class SandboxEgress {
  private readonly opts: SandboxEgressOptions;
  private started?: Promise<{ dir: string; proxy: EgressProxy }>;
  private closed = false;

  constructor(options: SandboxEgressOptions) {
    this.opts = options;
  }

  /** Start the proxy (once) and return what a command needs. */
  async prepare(): Promise<EgressCommandParts> {
    if (!this.started) {
      const starting = this.start();
      this.started = starting;
      // A failed start (socket dir, listen) is retried by the next command instead of failing them all.
      starting.catch(() => {
        if (this.started === starting) this.started = undefined;
      });
    }
    let dir: string;
    try {
      ({ dir } = await this.started);
    } catch (err) {
      throw new SandboxError(`sandbox network: the egress proxy could not start (${err instanceof Error ? err.message : String(err)})`, { code: "sandbox_network_unavailable", cause: err });
    }
    const node = this.opts.nodePath ?? process.execPath;
    return { binds: networkBinds(dir, node), env: networkEnv(), prelude: forwarderPrelude(node) };
  }

  private async start(): Promise<{ dir: string; proxy: EgressProxy }> {
    if (this.closed) throw new Error("sandbox network is closed");
    const dir = await mkdtemp(path.join(netParent(this.opts.owner), "deerflow-net-"));
    try {
      // Enterable, not listable: bwrap (already the sandbox uid) must reach the socket to bind the directory.
      await chmod(dir, 0o711);
      await writeFile(path.join(dir, FORWARDER_SCRIPT_NAME), FORWARDER_SCRIPT, { mode: 0o644 });
      const proxy = new EgressProxy({ ...this.opts.proxy, policy: this.opts.policy, socketPath: path.join(dir, PROXY_SOCKET_NAME), socketOwner: this.opts.owner });
      await proxy.start();
      return { dir, proxy };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Stop the proxy (cutting open tunnels) and remove the directory. */
  async close(): Promise<void> {
    this.closed = true;
    const started = this.started;
    if (!started) return;
    try {
      const { dir, proxy } = await started;
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    } catch {
      /* a failed start cleaned up after itself */
    }
  }
}
