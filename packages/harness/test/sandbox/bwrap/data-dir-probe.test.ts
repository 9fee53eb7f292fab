/**
 * A data dir under a directory the sandbox uid cannot enter (root with data
 * under /root/..., or any 0700 mkdtemp parent): bwrap binds must still work,
 * without opening anything up, and the probe must test the real data dir.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  bindStrategy,
  BwrapSandboxProvider,
  buildBwrapCommand,
  parseSandboxConfig,
  probeBwrapDataDir,
  sandboxRunAs,
  searchBlocker,
  threadDirs,
} from "../../../src/sandbox";
import type { BwrapSandbox } from "../../../src/sandbox";
import { bwrapAvailable, pidsMatching, sleep } from "../helpers";

const IS_ROOT = typeof process.getuid === "function" && process.getuid() === 0;
const HAS_BWRAP = bwrapAvailable();
if (!IS_ROOT) console.warn("[sandbox tests] SKIPPING closed-parent data dir tests: they need root (the uid drop is what makes the parent unreachable)");

describe.skipIf(!IS_ROOT || !HAS_BWRAP)("bwrap with a data dir under a 0700 parent (service running as root)", () => {
  const parent = mkdtempSync(path.join(os.tmpdir(), "dfsbx-closed-"));
  const base = path.join(parent, "deer-flow");
  const runAs = sandboxRunAs(parseSandboxConfig({})) as { uid: number; gid: number };
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it("the parent really is closed to the sandbox uid", () => {
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    expect(searchBlocker(path.join(base, "users"), runAs)).toBe(parent);
  });

  it("control: binding straight from the closed parent fails the way users saw it", () => {
    const probe = probeBwrapDataDir({ baseDir: base, runAs });
    const argv = buildBwrapCommand({
      bwrapPath: probe.bwrapPath as string,
      setprivPath: probe.setprivPath,
      runAs,
      binds: [{ host: base, dest: "/mnt/user-data/workspace", readOnly: false }],
      network: false,
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/",
      command: "true",
    });
    const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/Can't find source path .*Permission denied/);
  });

  it("the data-dir probe stages the binds and succeeds, naming the blocking directory", () => {
    const probe = probeBwrapDataDir({ baseDir: base, runAs });
    expect(probe.reason).toBeUndefined();
    expect(probe).toMatchObject({ ok: true, baseDir: base, blocker: parent });
    expect(probe.stage?.unsharePath).toMatch(/unshare$/);
    expect(bindStrategy(base, runAs).blocker).toBe(parent);
  });

  it("bash writes to outputs and reads uploads; nothing on the host is loosened", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base });
    expect(provider.stage).toBeDefined();
    const sandbox = provider.get(await provider.acquire("thread-closed")) as BwrapSandbox;
    const dirs = threadDirs(base, "thread-closed");
    // One staged mount (the thread's user-data) serves its three binds.
    const argv = sandbox.commandArgv("true");
    const n = argv.indexOf("deerflow-stage");
    expect(argv.slice(n + 1, n + 3)).toEqual(["1", dirs.userData]);
    expect(argv.slice(argv.indexOf("--bind"), argv.indexOf("--bind") + 3)).toEqual(["--bind", "/mnt/0/workspace", "/mnt/user-data/workspace"]);
    await sandbox.writeFile("/mnt/user-data/uploads/in.txt", "from the host\n");
    const r = await sandbox.executeCommand("cat /mnt/user-data/uploads/in.txt > /mnt/user-data/outputs/report.md && echo '# done' >> /mnt/user-data/outputs/report.md && ls /mnt/user-data && ls /mnt && id -u");
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.slice(0, 3)).toEqual(["outputs", "uploads", "workspace"]);
    // The staging tmpfs is not visible inside the sandbox: /mnt holds only user-data.
    expect(lines[3]).toBe("user-data");
    expect(lines[4]).toBe(String(runAs.uid));
    expect(readFileSync(path.join(dirs.outputs, "report.md"), "utf8")).toBe("from the host\n# done\n");
    expect(statSync(path.join(dirs.outputs, "report.md")).uid).toBe(runAs.uid);
    // Nothing was opened up: the parent stays 0700, the thread dirs stay private to the sandbox uid.
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    expect(statSync(dirs.outputs).mode & 0o777).toBe(0o700);
    // The staging mounts lived in a private namespace only.
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain("deerflow-stage");
    await provider.shutdown();
  });

  it("the sandbox uid still cannot read the closed parent from inside", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base });
    const sandbox = provider.get(await provider.acquire("thread-closed-2")) as BwrapSandbox;
    const r = await sandbox.executeCommand(`ls ${parent} 2>&1; cat /proc/self/status | grep CapEff`);
    expect(r.stdout).toMatch(/No such file or directory/);
    expect(r.stdout).toMatch(/CapEff:\s+0+\n/);
  });

  it("a staged command is still killed as a whole tree on timeout", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base });
    const sandbox = provider.get(await provider.acquire("thread-closed-3")) as BwrapSandbox;
    const r = await sandbox.executeCommand("sleep 4242 & sleep 4243", { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    // wait for the tree's exit itself (bounded), not a fixed delay a loaded machine can outlast
    for (let i = 0; i < 400 && pidsMatching("sleep 424").length; i++) await sleep(25);
    expect(pidsMatching("sleep 424")).toEqual([]);
  });
});
