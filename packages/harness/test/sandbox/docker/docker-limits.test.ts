import net from "node:net";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled();
const MiB = 1024 * 1024;

/** A non-loopback IPv4 address of this host (what a container with a network could reach). */
function hostAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

describe.skipIf(!enabled)("DockerSandbox limits and network (real Docker)", () => {
  let fx: DockerFixture;
  let sandbox: DockerSandbox;
  let server: net.Server;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    fx = dockerFixture({
      limits: { processes: 64, memory_bytes: 128 * MiB, tmp_size_bytes: 16 * MiB, disk_quota_bytes: 8 * MiB, file_size_bytes: 64 * MiB },
    });
    sandbox = fx.provider.get(await fx.provider.acquire("limits")) as DockerSandbox;
    server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "0.0.0.0", () => r()));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    server?.close();
    await fx?.cleanup();
  });

  it("bounds a fork flood by the pids limit, and the sandbox keeps working afterwards", async () => {
    // Each background sleep holds a pid; far more are attempted than the limit allows. The flooding subshell dies
    // when fork fails; the parent then reads the container's task count with builtins only (no fork left).
    const res = await sandbox.executeCommand(
      "( i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); done ) 2>/dev/null; read n < /sys/fs/cgroup/pids/pids.current 2>/dev/null || read n < /sys/fs/cgroup/pids.current; echo count=$n",
      { timeoutMs: 60_000 },
    );
    const count = Number(/count=(\d+)/.exec(res.stdout)?.[1]);
    expect(count).toBeLessThanOrEqual(64);
    expect(count).toBeGreaterThan(32);
    const after = await sandbox.executeCommand("echo alive");
    expect(after.stdout).toBe("alive\n");
  });

  it("kills a command that exceeds the memory limit, the container survives", async () => {
    // `tail` of /dev/zero buffers an endless line: unbounded memory.
    const res = await sandbox.executeCommand("tail /dev/zero", { timeoutMs: 60_000 });
    expect(res.timedOut).toBe(false);
    expect(res.exitCode).toBe(137);
    expect((await sandbox.executeCommand("echo alive")).stdout).toBe("alive\n");
  });

  it("bounds /tmp by tmp_size_bytes", async () => {
    const res = await sandbox.executeCommand("head -c 64M /dev/zero > /tmp/big; echo rc=$?; du -k /tmp/big 2>/dev/null || ls -l /tmp/big; rm -f /tmp/big", { timeoutMs: 60_000 });
    expect(res.stdout).toMatch(/rc=[1-9]/);
    expect(res.stderr).toMatch(/No space left on device/);
  });

  it("stops a command that grows the thread dirs past the disk quota", async () => {
    const res = await sandbox.executeCommand("i=0; while [ $i -lt 40 ]; do head -c 1M /dev/zero > /mnt/user-data/workspace/f$i; i=$((i+1)); sleep 0.1; done; echo done", { timeoutMs: 60_000 });
    expect(res.stderr).toMatch(/quota/i);
    expect(res.stdout).not.toContain("done");
    await sandbox.executeCommand("rm -f /mnt/user-data/workspace/f*");
  });

  it("has no network: no interface but loopback, no route to this host or the internet", async () => {
    const target = hostAddress();
    const probes = [`exec 3<>/dev/tcp/1.1.1.1/80 && echo LEAK-internet`];
    if (target) probes.push(`exec 3<>/dev/tcp/${target}/${port} && echo LEAK-host`);
    const res = await sandbox.executeCommand(`ls /sys/class/net; for p in ${probes.map((p) => `'${p}'`).join(" ")}; do timeout 5 bash -c "$p" 2>&1; done; true`, { timeoutMs: 30_000 });
    expect(res.stdout.split("\n").filter(Boolean).slice(0, 1)).toEqual(["lo"]);
    expect(res.stdout).not.toContain("LEAK");
    expect(res.stdout).toMatch(/Network is unreachable|Connection refused|No route/);
    expect(connections).toBe(0);
  });
});
