import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, utimesSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createRunContext } from "../../../src/runtime/run-context";
import { createSandboxProvider, ensureRunSandbox, releaseRunSandbox, threadDirs } from "../../../src/sandbox";
import { DockerEngine, DockerSandboxProvider, LABELS, MANAGED_BY } from "../../../src/sandbox/docker";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled, ensureTestImage, listLabelled, removeLabelled } from "./test-image";

const enabled = dockerTestsEnabled();
const engine = new DockerEngine();

function state(name: string): string {
  const r = spawnSync("docker", ["inspect", "-f", "{{.State.Status}}", name], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "missing";
}

describe("Docker provider selection", () => {
  it("is selected by 'docker' and by DeerFlow's AioSandboxProvider class path; unsupported values and open networks raise at construction", async () => {
    const base = path.join(os.tmpdir(), "dfdock-select");
    for (const use of ["docker", "deerflow.community.aio_sandbox:AioSandboxProvider"]) {
      const p = createSandboxProvider({ use, replicas: 0 }, { baseDir: base });
      expect(p).toBeInstanceOf(DockerSandboxProvider);
      await p.shutdown();
    }
    expect(() => createSandboxProvider({ use: "deerflow.community.e2b:E2BSandboxProvider" }, { baseDir: base })).toThrow(/not supported/);
    // Network modes enter each container's network namespace: root only (refused at construction otherwise).
    const allowlist = () => createSandboxProvider({ use: "docker", replicas: 0, network: { mode: "allowlist", allow: ["pypi.org"] } }, { baseDir: base });
    if (process.getuid?.() === 0) await allowlist().shutdown();
    else expect(allowlist).toThrow(expect.objectContaining({ code: "sandbox_network_unsupported" }));
    expect(() => createSandboxProvider({ use: "docker", mounts: [{ host_path: "/var/run", container_path: "/mnt/run" }] }, { baseDir: base })).toThrow(/Docker socket/);
    expect(() => createSandboxProvider({ use: "docker", mounts: [{ host_path: "/srv", container_path: "/mnt/user-data/x" }] }, { baseDir: base })).toThrow(/reserves/);
  });
});

describe.skipIf(!enabled)("Docker provider lifecycle (real Docker)", () => {
  const fixtures: DockerFixture[] = [];
  const make = (...args: Parameters<typeof dockerFixture>) => {
    const fx = dockerFixture(...args);
    fixtures.push(fx);
    return fx;
  };

  afterEach(() => {
    vi.useRealTimers();
  });

  afterAll(async () => {
    for (const fx of fixtures) await fx.cleanup();
  });

  it("shares one container between the lead run and a sub-agent; released after the last one", async () => {
    const fx = make({ idle_timeout: 0, replicas: 1 });
    const lead = createRunContext({ threadId: "shared", runId: "run-lead", context: { user_id: "default" } });
    const sub = createRunContext({ threadId: "shared", runId: "run-sub", context: { user_id: "default" } });
    const a = await ensureRunSandbox(fx.provider, lead);
    const b = await ensureRunSandbox(fx.provider, sub);
    expect(a).toBe(b);
    expect(fx.provider.leaseCount(a.id)).toBe(2);
    const name = fx.provider.containerOf(a.id)?.name as string;
    await releaseRunSandbox(lead);
    expect(fx.provider.leaseCount(a.id)).toBe(1);
    expect((await b.executeCommand("echo still-here")).stdout).toBe("still-here\n");
    await releaseRunSandbox(sub);
    expect(fx.provider.leaseCount(a.id)).toBe(0);
    // idle_timeout 0: kept (within `replicas`) until shutdown.
    expect(state(name)).toBe("running");
    await fx.provider.shutdown();
    expect(state(name)).toBe("missing");
  });

  it("removes a container idle_timeout seconds after its last lease ended, swept at least every 60 s", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const fx = make({ idle_timeout: 300, replicas: 1 });
    const sweeps: Promise<void>[] = [];
    const original = fx.provider.sweep.bind(fx.provider);
    vi.spyOn(fx.provider, "sweep").mockImplementation(() => {
      const p = original();
      sweeps.push(p);
      return p;
    });
    const id = await fx.provider.acquire("idle");
    const name = fx.provider.containerOf(id)?.name as string;
    await fx.provider.release(id);
    vi.advanceTimersByTime(60_000);
    expect(sweeps.length).toBeGreaterThanOrEqual(1);
    await Promise.all(sweeps);
    expect(state(name)).toBe("running");
    // Re-acquired while idle: same container, no Docker call needed.
    const again = await fx.provider.acquire("idle");
    expect(fx.provider.containerOf(again)?.name).toBe(name);
    await fx.provider.release(again);
    vi.advanceTimersByTime(300_000);
    await Promise.all(sweeps);
    expect(state(name)).toBe("missing");
    expect(fx.provider.get(id)).toBeUndefined();
  });

  it("recreates a killed or removed container transparently on the next command", async () => {
    const fx = make();
    const id = await fx.provider.acquire("phoenix");
    const sandbox = fx.provider.get(id) as DockerSandbox;
    await sandbox.writeFile("/mnt/user-data/workspace/keep.txt", "kept");
    const name = fx.provider.containerOf(id)?.name as string;
    expect(spawnSync("docker", ["kill", name]).status).toBe(0);
    const r1 = await sandbox.executeCommand("cat keep.txt");
    expect(r1).toMatchObject({ stdout: "kept", exitCode: 0 });
    expect(state(name)).toBe("running");
    expect(spawnSync("docker", ["rm", "-f", name]).status).toBe(0);
    const r2 = await sandbox.executeCommand("echo back");
    expect(r2.stdout).toBe("back\n");
    expect(listLabelled(LABELS.instance, fx.provider.owner.instanceId)).toHaveLength(1);
  });

  it("reclaims containers of a dead server process at start, and leaves a live process's alone", async () => {
    const image = ensureTestImage();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const deadPid = dead.stdout.trim();
    const labels = (pid: string, instance: string) => ({ [LABELS.managedBy]: MANAGED_BY, [LABELS.instance]: instance, [LABELS.host]: os.hostname(), [LABELS.pid]: pid, [LABELS.role]: "thread" });
    const tag = `orphan-test-${process.pid}`;
    const orphan = await engine.createContainer({ Image: image, name: `${tag}-dead`, Cmd: ["/bin/sh", "-c", "sleep 3600"], Labels: { ...labels(deadPid, `${tag}-a`), "deerflow.test": tag } });
    await engine.startContainer(orphan);
    const alive = await engine.createContainer({ Image: image, name: `${tag}-alive`, Cmd: ["/bin/sh", "-c", "sleep 3600"], Labels: { ...labels(String(process.pid), `${tag}-b`), "deerflow.test": tag } });
    try {
      const fx = make();
      // The slot dirs of a dead instance (old, no container left) go too; a fresh one may be a live instance's first slot.
      const staleDir = path.join(fx.baseDir, "sandbox-pool", "00000000deadbeef");
      const freshDir = path.join(fx.baseDir, "sandbox-pool", "00000000cafef00d");
      mkdirSync(path.join(staleDir, "slot", "user-data"), { recursive: true });
      mkdirSync(freshDir, { recursive: true });
      const old = new Date(Date.now() - 3600_000);
      utimesSync(staleDir, old, old);
      await fx.provider.sweep();
      await fx.provider.settled();
      expect(await engine.inspectContainer(orphan)).toBeNull();
      expect(await engine.inspectContainer(alive)).not.toBeNull();
      expect(existsSync(staleDir)).toBe(false);
      expect(existsSync(freshDir)).toBe(true);
    } finally {
      removeLabelled("deerflow.test", tag);
    }
  });

  it("hands a pre-created warm container to a new thread; its dirs become the thread's", async () => {
    const fx = make({ replicas: 2 });
    await fx.provider.settled();
    expect(fx.provider.poolNames()).toHaveLength(2);
    const started = performance.now();
    const id = await fx.provider.acquire("warm-thread");
    const warmMs = performance.now() - started;
    const info = fx.provider.containerOf(id);
    expect(info?.name).toBe(fx.provider.containerNameFor("warm-thread"));
    expect(state(info?.name as string)).toBe("running");
    const sandbox = fx.provider.get(id) as DockerSandbox;
    const dirs = threadDirs(fx.baseDir, "warm-thread");
    await sandbox.writeFile("/mnt/user-data/uploads/in.txt", "uploaded");
    const r = await sandbox.executeCommand("cat /mnt/user-data/uploads/in.txt > /mnt/user-data/outputs/out.txt; cat /mnt/skills/public/demo/SKILL.md");
    expect(r.stdout).toContain("# demo skill");
    expect(readFileSync(path.join(dirs.outputs, "out.txt"), "utf8")).toBe("uploaded");
    expect(warmMs).toBeLessThan(300);
    // A thread whose dirs already exist cannot take a slot: created cold, still correct.
    await fx.provider.settled();
    const existing = threadDirs(fx.baseDir, "old-thread");
    spawnSync("mkdir", ["-p", existing.workspace]);
    const old = await fx.provider.acquire("old-thread");
    expect((await (fx.provider.get(old) as DockerSandbox).executeCommand("pwd")).stdout).toBe("/mnt/user-data/workspace\n");
    await fx.provider.settled();
    expect(fx.provider.poolNames().length).toBeGreaterThanOrEqual(1);
  });

  it("shutdown removes every container it started (docker ps -a by label is empty)", async () => {
    const fx = make({ replicas: 1 });
    await fx.provider.acquire("s1");
    await fx.provider.acquire("s2");
    await fx.provider.settled();
    expect(listLabelled(LABELS.instance, fx.provider.owner.instanceId).length).toBeGreaterThanOrEqual(3);
    await fx.provider.shutdown();
    expect(listLabelled(LABELS.instance, fx.provider.owner.instanceId)).toEqual([]);
    await expect(fx.provider.acquire("s3")).rejects.toThrow(/shut down/);
    // The pool's slot dirs went with its containers.
    expect(existsSync(path.join(fx.baseDir, "sandbox-pool", fx.provider.owner.instanceId))).toBe(false);
  });
});
