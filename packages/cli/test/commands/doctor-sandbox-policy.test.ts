import { describe, expect, it } from "vitest";
import { findBinary, parseSandboxConfig } from "@deerflow-ts/harness/sandbox";
import { sandboxPolicyFindings } from "../../src/commands/doctor";

const bwrap = findBinary("bwrap");

describe("deerflow doctor: effective sandbox limits and network mode", () => {
  it("names the network mode and what it refuses", () => {
    const open = sandboxPolicyFindings(parseSandboxConfig({ network: true }), bwrap, { version: null, parents: {}, notes: ["test: no cgroups"] });
    const net = open.find((f) => f.check === "sandbox-network");
    expect(net?.message).toMatch(/^open — public addresses through the egress proxy; this machine .* refused/);
    const isolated = sandboxPolicyFindings(parseSandboxConfig({}), bwrap, { version: null, parents: {}, notes: [] });
    expect(isolated.find((f) => f.check === "sandbox-network")?.message).toMatch(/^isolated — no network/);
  });

  it("warns, naming why, when limits fall back to per-process rlimits", () => {
    const findings = sandboxPolicyFindings(parseSandboxConfig({}), bwrap, { version: null, parents: {}, notes: ["cgroup v1: not writable"] });
    const limits = findings.find((f) => f.check === "sandbox-limits");
    expect(limits?.level).toBe("warn");
    expect(limits?.message).toContain("per-sandbox limits via rlimit");
    expect(limits?.fix).toContain("cgroup v1: not writable");
  });

  it("reports the defaults enforced per sandbox by cgroups", () => {
    const parents = { pids: "/sys/fs/cgroup/pids/x", memory: "/sys/fs/cgroup/memory/x", cpu: "/sys/fs/cgroup/cpu/x" };
    const findings = sandboxPolicyFindings(parseSandboxConfig({}), bwrap, { version: 1, parents, notes: [] });
    const limits = findings.find((f) => f.check === "sandbox-limits");
    expect(limits?.level).toBe("ok");
    expect(limits?.message).toContain("processes 256 (cgroup-v1)");
    expect(limits?.message).toContain("memory 2 GiB (cgroup-v1)");
    expect(limits?.message).toContain("disk 5 GiB (measured)");
  });
});
