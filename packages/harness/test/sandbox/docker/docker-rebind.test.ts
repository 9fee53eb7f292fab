import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { threadDirs } from "../../../src/sandbox";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled();

function state(name: string): string {
  const r = spawnSync("docker", ["inspect", "-f", "{{.State.Status}}", name], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "missing";
}

describe.skipIf(!enabled)("Docker sandbox binds follow replaced directories; replicas bound idle containers (real Docker)", () => {
  const fixtures: DockerFixture[] = [];
  afterAll(async () => {
    for (const fx of fixtures) await fx.cleanup();
  });

  it("a skills view swapped in by rename shows in the container on the next command", async () => {
    const fx = dockerFixture();
    fixtures.push(fx);
    const sandbox = fx.provider.get(await fx.provider.acquire("skills-swap")) as DockerSandbox;
    expect((await sandbox.executeCommand("ls /mnt/skills/public")).stdout).toBe("demo\n");
    // What the skills projection does: build a new tree, rename it over the old one.
    const next = `${fx.skillsDir}.next`;
    mkdirSync(path.join(next, "public", "other"), { recursive: true });
    writeFileSync(path.join(next, "public", "other", "SKILL.md"), "# other\n");
    renameSync(fx.skillsDir, `${fx.skillsDir}.old`);
    renameSync(next, fx.skillsDir);
    rmSync(`${fx.skillsDir}.old`, { recursive: true, force: true });
    expect((await sandbox.executeCommand("ls /mnt/skills/public")).stdout).toBe("other\n");
  });

  it("thread dirs deleted and made anew under a live sandbox are the ones the container sees", async () => {
    const fx = dockerFixture();
    fixtures.push(fx);
    const sandbox = fx.provider.get(await fx.provider.acquire("reborn")) as DockerSandbox;
    await sandbox.executeCommand("echo old > /mnt/user-data/workspace/old.txt");
    const dirs = threadDirs(fx.baseDir, "reborn");
    rmSync(path.dirname(dirs.userData), { recursive: true, force: true });
    const r = await sandbox.executeCommand("ls /mnt/user-data/workspace; echo new > /mnt/user-data/workspace/new.txt");
    expect(r.stdout).toBe("");
    expect(await sandbox.readFile("/mnt/user-data/workspace/new.txt")).toBe("new\n");
  });

  it("keeps at most `replicas` idle containers, removing the longest idle first", async () => {
    const fx = dockerFixture({ replicas: 2, idle_timeout: 0 });
    fixtures.push(fx);
    const names: string[] = [];
    const ids: string[] = [];
    for (const t of ["i1", "i2", "i3"]) {
      const id = await fx.provider.acquire(t);
      ids.push(id);
      names.push(fx.provider.containerOf(id)?.name as string);
    }
    await fx.provider.settled();
    for (const id of ids) await fx.provider.release(id);
    await fx.provider.settled();
    expect(names.map(state)).toEqual(["missing", "running", "running"]);
    expect(fx.provider.poolNames()).toEqual([]);
  });
});
