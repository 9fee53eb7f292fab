import { describe, expect, it } from "vitest";
import { buildBwrapCommand, buildBwrapInvocation, parseSandboxConfig } from "../../../src/sandbox";
import { describeSandboxLimits, resolveSandboxLimits } from "../../../src/sandbox/limits";
import type { CgroupSupport } from "../../../src/sandbox/limits";

const GiB = 1024 ** 3;
const V1: CgroupSupport = { version: 1, parents: { pids: "/cg/pids/deerflow-sandboxes", memory: "/cg/memory/deerflow-sandboxes", cpu: "/cg/cpu/deerflow-sandboxes" }, notes: [] };
const NONE: CgroupSupport = { version: null, parents: {}, notes: ["nothing writable"] };
const runAs = { uid: 65534, gid: 65534 };

function argvFor(cg: CgroupSupport, raw: Record<string, unknown> = {}) {
  const eff = resolveSandboxLimits(parseSandboxConfig(raw), { runAs, bwrapPath: "/usr/bin/bwrap", cgroups: cg });
  return {
    eff,
    argv: buildBwrapCommand({
      bwrapPath: "/usr/bin/bwrap",
      prlimitPath: "/usr/bin/prlimit",
      setprivPath: "/usr/bin/setpriv",
      runAs,
      binds: [{ host: "/srv/secret-host-dir/ws", dest: "/mnt/user-data/workspace", readOnly: false }],
      network: false,
      env: {},
      cwd: "/mnt/user-data/workspace",
      limits: eff.rlimits,
      tmpSizeBytes: eff.tmpSizeBytes,
      cgroupProcs: ["/cg/pids/deerflow-sandboxes/x/cgroup.procs"],
      command: "true",
    }),
  };
}

describe("sandbox.limits defaults and how they are applied", () => {
  it("defaults: 256 processes, 2 GiB memory, 1 CPU, 1 GiB /tmp, 5 GiB disk per thread; old keys kept", () => {
    expect(parseSandboxConfig({}).limits).toEqual({
      cpu_seconds: 600,
      file_size_bytes: GiB,
      open_files: 1024,
      processes: 256,
      address_space_bytes: 0,
      memory_bytes: 2 * GiB,
      cpu_cores: 1,
      tmp_size_bytes: GiB,
      disk_quota_bytes: 5 * GiB,
    });
    // A partial section keeps the other defaults.
    expect(parseSandboxConfig({ limits: { processes: 10 } }).limits.memory_bytes).toBe(2 * GiB);
  });

  it("with pids cgroups there is no per-uid RLIMIT_NPROC (one thread's flood cannot starve the others)", () => {
    const { eff, argv } = argvFor(V1);
    expect(eff.cgroup?.limits).toEqual({ pidsMax: 256, memoryBytes: 2 * GiB, cpuCores: 1 });
    expect(argv.some((a) => a.startsWith("--nproc"))).toBe(false);
    expect(argv.some((a) => a.startsWith("--as"))).toBe(false);
    // The cgroup join runs first, before prlimit, setpriv and bwrap.
    expect(argv.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(argv.indexOf("/cg/pids/deerflow-sandboxes/x/cgroup.procs")).toBeLessThan(argv.indexOf("/usr/bin/setpriv"));
    expect(describeSandboxLimits(parseSandboxConfig({}), { runAs, cgroups: V1 }).mechanism).toBe("cgroup-v1");
  });

  it("without cgroups falls back to RLIMIT_NPROC and RLIMIT_AS = memory_bytes, and says so", () => {
    const { argv } = argvFor(NONE);
    expect(argv).toContain("--nproc=256");
    expect(argv).toContain(`--as=${2 * GiB}`);
    const report = describeSandboxLimits(parseSandboxConfig({}), { runAs, cgroups: NONE });
    expect(report.mechanism).toBe("rlimit");
    expect(report.processes.detail).toMatch(/shared by all sandboxes/);
    expect(report.cpu.mechanism).toBe("none");
    expect(report.notes).toContain("nothing writable");
  });

  it("the default /tmp is a 1 GiB tmpfs", () => {
    const { argv } = argvFor(V1);
    const i = argv.lastIndexOf("/tmp") - 1;
    expect(argv.slice(i - 2, i + 2)).toEqual(["--size", String(GiB), "--tmpfs", "/tmp"]);
    // /dev is read-only; its /dev/shm is a tmpfs of at most 64 MiB.
    const shm = argv.indexOf("/dev/shm");
    expect(argv.slice(shm - 3, shm + 3)).toEqual(["--size", String(64 * 1024 * 1024), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]);
  });

  it("--args keeps every host bind source out of bwrap's argv", () => {
    const spec = {
      bwrapPath: "/usr/bin/bwrap",
      binds: [{ host: "/srv/secret-host-dir/ws", dest: "/mnt/user-data/workspace", readOnly: false }],
      network: false,
      env: { A: "1" },
      cwd: "/mnt/user-data/workspace",
      command: "echo hi",
    };
    const inline = buildBwrapCommand(spec);
    expect(inline).toContain("/srv/secret-host-dir/ws");
    const { argv, argsData } = buildBwrapInvocation(spec);
    expect(argv.join(" ")).not.toContain("secret-host-dir");
    expect(argv).toEqual(["/usr/bin/bwrap", "--args", "3", "--", "/bin/sh", "-c", "echo hi"]);
    expect(argsData.toString("utf8").split("\0").slice(0, -1)).toEqual(inline.slice(1, -4));
  });
});
