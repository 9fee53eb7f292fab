/**
 * cgroup detection and limit files on fake cgroup trees (plain directories
 * standing in for cgroupfs), so the v2 and v1 layouts are both covered on
 * any machine. The real cgroups are exercised in sandbox-limits.test.ts.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CGROUP_PARENT_NAME, detectCgroups, SandboxCgroup } from "../../../src/sandbox/limits";
import { tempBase } from "../helpers";

const base = tempBase("dfcg-");
afterAll(() => base.cleanup());

function tree(name: string, files: Record<string, string>): string {
  const root = path.join(base.dir, name);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  return root;
}

const read = (f: string) => readFileSync(f, "utf8").trim();

describe("detectCgroups", () => {
  it("v2: sandbox cgroups go next to our own cgroup, with pids, memory and cpu delegated", () => {
    const root = tree("v2", {
      "user.slice/cgroup.controllers": "cpuset cpu io memory pids",
      "user.slice/cgroup.subtree_control": "",
      "user.slice/app.scope/cgroup.procs": "1234",
    });
    const support = detectCgroups({
      mountinfo: `41 31 0:38 / ${root} rw,relatime - cgroup2 cgroup2 rw\n`,
      selfCgroup: "0::/user.slice/app.scope\n",
    });
    const parent = path.join(root, "user.slice", CGROUP_PARENT_NAME);
    expect(support.version).toBe(2);
    expect(support.parents).toEqual({ pids: parent, memory: parent, cpu: parent });
    expect(read(path.join(parent, "cgroup.subtree_control"))).toBe("+pids +memory +cpu");

    const cg = new SandboxCgroup(support, "bwrap:default:t1", { pidsMax: 256, memoryBytes: 2 * 1024 ** 3, cpuCores: 1.5 });
    const dir = cg.dirs.pids as string;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "memory.swap.max"), "max"); // present on a real v2 memory controller
    expect(cg.ensure()).toEqual([path.join(dir, "cgroup.procs")]);
    expect(read(path.join(dir, "pids.max"))).toBe("256");
    expect(read(path.join(dir, "memory.max"))).toBe(String(2 * 1024 ** 3));
    expect(read(path.join(dir, "memory.swap.max"))).toBe("0");
    expect(read(path.join(dir, "cpu.max"))).toBe("150000 100000");
  });

  it("v2 without the memory and pids controllers is not used, and says why", () => {
    const root = tree("v2-empty", { "cgroup.controllers": "hugetlb", "cgroup.subtree_control": "" });
    const support = detectCgroups({ mountinfo: `41 31 0:38 / ${root} rw - cgroup2 cgroup2 rw\n`, selfCgroup: "0::/\n" });
    expect(support.version).toBeNull();
    expect(support.notes.join("\n")).toMatch(/controllers pids and memory are not available \(has: hugetlb\)/);
  });

  it("v1: one deerflow-sandboxes directory below our own cgroup in each hierarchy", () => {
    const root = tree("v1", { "pids/x": "", "memory/svc/abc/x": "", "cpu,cpuacct/x": "" });
    const mountinfo = [
      `32 31 0:29 / ${root}/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct`,
      `35 31 0:32 / ${root}/memory rw,relatime - cgroup cgroup rw,memory`,
      `39 31 0:36 / ${root}/pids rw,relatime - cgroup cgroup rw,pids`,
    ].join("\n");
    const support = detectCgroups({ mountinfo, selfCgroup: "8:pids:/\n4:memory:/svc/abc\n1:cpu,cpuacct:/\n0::/\n" });
    expect(support.version).toBe(1);
    expect(support.parents).toEqual({
      pids: path.join(root, "pids", CGROUP_PARENT_NAME),
      memory: path.join(root, "memory/svc/abc", CGROUP_PARENT_NAME),
      cpu: path.join(root, "cpu,cpuacct", CGROUP_PARENT_NAME),
    });
    const cg = new SandboxCgroup(support, "bwrap:default:t1", { pidsMax: 64, memoryBytes: 1 << 30, cpuCores: 1 });
    const mem = cg.dirs.memory as string;
    mkdirSync(mem, { recursive: true });
    writeFileSync(path.join(mem, "memory.memsw.limit_in_bytes"), "-1"); // swap accounting on
    expect(cg.ensure()).toHaveLength(3);
    expect(read(path.join(cg.dirs.pids as string, "pids.max"))).toBe("64");
    expect(read(path.join(mem, "memory.limit_in_bytes"))).toBe(String(1 << 30));
    expect(read(path.join(mem, "memory.memsw.limit_in_bytes"))).toBe(String(1 << 30));
    expect(read(path.join(cg.dirs.cpu as string, "cpu.cfs_quota_us"))).toBe("100000");
  });

  it("nothing mounted: no cgroups, with a reason", () => {
    const support = detectCgroups({ mountinfo: "", selfCgroup: "0::/\n" });
    expect(support).toMatchObject({ version: null, parents: {} });
    expect(support.notes.length).toBeGreaterThan(0);
  });
});
