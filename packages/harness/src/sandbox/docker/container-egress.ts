import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { SandboxError } from "../../errors";
import { FORWARDER_PORT, FORWARDER_SCRIPT_NAME, networkEnv, PROXY_SOCKET_NAME, SANDBOX_NET_DIR } from "../network/forwarder";
import { SandboxEgress } from "../network/egress";
import type { EgressPolicy } from "../network/policy";

/** Options of {@link ContainerEgress}. */
export interface ContainerEgressOptions {
  policy: EgressPolicy;
  /** The sandbox uid/gid: owns the proxy socket and runs the forwarder. */
  runAs: { uid: number; gid: number };
  nsenterPath: string;
  /** `setpriv`: gives the forwarder a parent-death signal, so it ends with the server even on a crash. */
  setprivPath?: string;
  /** Host node binary that runs the forwarder (default: this process's). */
  nodePath?: string;
  /** How long the forwarder may take to listen (default 10 s). */
  readyTimeoutMs?: number;
}

/**
 * The network of one Docker sandbox in `allowlist` / `open` mode. The
 * container keeps `NetworkMode: none` (only `lo`), and the bubblewrap tier's
 * pieces are reused: this sandbox's own {@link SandboxEgress} proxy on a
 * host Unix socket, and the same forwarder script, which accepts TCP on
 * 127.0.0.1:{@link FORWARDER_PORT} and copies each connection to that socket.
 * The image cannot be assumed to have node, so the forwarder is a HOST
 * process (the host's node, as the sandbox uid) entered into the container's
 * network namespace with `nsenter --net` — a Unix socket is reached by
 * filesystem path, which the network namespace does not change. The container
 * sees only a loopback port; the policy is enforced by the proxy on the host.
 */
export class ContainerEgress {
  private readonly egress: SandboxEgress;
  private forwarder?: { child: ChildProcess; containerId: string };

  constructor(private readonly opts: ContainerEgressOptions) {
    this.egress = new SandboxEgress({ policy: opts.policy, owner: opts.runAs });
  }

  /** Proxy variables for every command (clients go through 127.0.0.1:3128). */
  env(): Record<string, string> {
    return networkEnv();
  }

  /** Start (or restart, for a new container) the forwarder in the container's network namespace. */
  async attach(containerId: string, lookupPid: () => Promise<number>): Promise<void> {
    if (this.forwarder?.containerId === containerId && this.forwarder.child.exitCode === null) return;
    this.detach();
    const containerPid = await lookupPid();
    if (!(containerPid > 0)) throw new SandboxError(`sandbox network: container ${containerId.slice(0, 12)} is not running`, { code: "sandbox_network_unavailable" });
    const parts = await this.egress.prepare();
    const dir = parts.binds.find((b) => b.dest === SANDBOX_NET_DIR)?.host;
    if (!dir) throw new SandboxError("sandbox network: the egress proxy has no socket directory", { code: "sandbox_network_unavailable" });
    const { uid, gid } = this.opts.runAs;
    const forwarder = [this.opts.nodePath ?? process.execPath, path.join(dir, FORWARDER_SCRIPT_NAME), String(FORWARDER_PORT), path.join(dir, PROXY_SOCKET_NAME)];
    const deathSig = this.opts.setprivPath ? [this.opts.setprivPath, "--pdeathsig", "KILL", "--"] : [];
    const child = spawn(
      this.opts.nsenterPath,
      [`--net=/proc/${containerPid}/ns/net`, `--setgid=${gid}`, `--setuid=${uid}`, "--", ...deathSig, ...forwarder],
      // fd 9 carries the forwarder's "ready" line; NODE_OPTIONS etc. are not inherited.
      { cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "ignore", "pipe", "ignore", "ignore", "ignore", "ignore", "ignore", "ignore", "pipe"] },
    );
    this.forwarder = { child, containerId };
    const ready = (child.stdio as unknown as (NodeJS.ReadableStream & { destroy(): void })[])[9];
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString("utf8");
    });
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        this.detach();
        reject(new SandboxError(`sandbox network: the egress forwarder did not start in container ${containerId.slice(0, 12)}: ${why}`, { code: "sandbox_network_unavailable" }));
      };
      const timer = setTimeout(() => fail("timed out"), this.opts.readyTimeoutMs ?? 10_000);
      ready.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      child.once("error", (e) => fail(e.message));
      child.once("exit", (code) => fail(`exit ${code}${stderr ? `: ${stderr.trim()}` : ""}`));
    });
    child.removeAllListeners("exit");
    ready.destroy();
  }

  /** Stop the forwarder (container lost or released). */
  detach(): void {
    const f = this.forwarder;
    this.forwarder = undefined;
    if (f && f.child.exitCode === null) f.child.kill("SIGKILL");
  }

  /** Stop the forwarder and the proxy. */
  async close(): Promise<void> {
    this.detach();
    await this.egress.close();
  }
}
