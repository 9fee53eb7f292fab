import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../../src/client";
import { DeerFlowRuntime } from "../../../src/deerflow-runtime";
import { DockerSandboxProvider, LABELS } from "../../../src/sandbox/docker";
import { dockerTestsEnabled, ensureTestImage, removeLabelled } from "./test-image";

const enabled = dockerTestsEnabled();

function state(name: string): string {
  const r = spawnSync("docker", ["inspect", "-f", "{{.State.Status}}", name], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "missing";
}

/** A config.yaml selecting the Docker sandbox by DeerFlow's class path. */
function writeConfig(dir: string, image: string, prefix: string): string {
  const file = path.join(dir, "config.yaml");
  writeFileSync(
    file,
    [
      "models:",
      "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }",
      "sandbox:",
      "  use: deerflow.community.aio_sandbox:AioSandboxProvider",
      `  image: ${image}`,
      // One idle container is kept warm (replicas counts idle ones), for an hour: only the deletion can remove it.
      "  replicas: 1",
      "  idle_timeout: 3600",
      `  container_prefix: ${prefix}`,
      "",
    ].join("\n"),
  );
  return file;
}

describe.skipIf(!enabled)("deleting a thread removes its Docker container (real Docker)", () => {
  const dirs: string[] = [];
  const runtimes: DeerFlowRuntime[] = [];
  afterAll(async () => {
    for (const rt of runtimes) {
      const p = rt.sandboxProvider;
      await rt.close().catch(() => undefined);
      if (p instanceof DockerSandboxProvider) removeLabelled(LABELS.instance, p.owner.instanceId);
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("removes the deleted thread's container at once, idle or never released, while a command in another thread's container goes on", async () => {
    const image = ensureTestImage();
    const dir = mkdtempSync(path.join(os.tmpdir(), "dfdock-del-"));
    dirs.push(dir);
    const logs: string[] = [];
    const rt = await DeerFlowRuntime.open({ configPath: writeConfig(dir, image, `dftest-${randomBytes(3).toString("hex")}`), cwd: dir, dataDir: path.join(dir, "d"), log: (m) => logs.push(m) });
    runtimes.push(rt);
    const provider = rt.sandboxProvider;
    expect(provider).toBeInstanceOf(DockerSandboxProvider);
    const docker = provider as DockerSandboxProvider;

    // Thread "gone" ran and ended (idle, kept warm for idle_timeout); thread "held" still holds its lease.
    const goneId = await provider.acquire("gone", { userId: "alice" });
    expect((await provider.get(goneId)!.executeCommand("echo hi")).stdout).toBe("hi\n");
    await provider.release(goneId);
    const heldId = await provider.acquire("held", { userId: "alice" });
    const otherId = await provider.acquire("other", { userId: "alice" });
    const other = provider.get(otherId)!;
    expect((await provider.get(heldId)!.executeCommand("true")).exitCode).toBe(0);
    const goneName = docker.containerNameFor("gone", "alice");
    const heldName = docker.containerNameFor("held", "alice");
    const otherName = docker.containerNameFor("other", "alice");
    expect([state(goneName), state(heldName), state(otherName)]).toEqual(["running", "running", "running"]);

    // A command in the other thread waits for a file the test writes only after both deletions.
    const running = other.executeCommand("while [ ! -e /mnt/user-data/workspace/go ]; do sleep 0.05; done; echo other-finished");
    await rt.deleteThread("gone", "alice");
    await rt.deleteThread("held", "alice");
    expect(state(goneName)).toBe("missing");
    expect(state(heldName)).toBe("missing");
    expect(provider.get(goneId)).toBeUndefined();
    expect(provider.leaseCount(heldId)).toBe(0);

    await other.writeFile("/mnt/user-data/workspace/go", "");
    const res = await running;
    expect(res).toMatchObject({ exitCode: 0, stdout: "other-finished\n", timedOut: false });
    expect(state(otherName)).toBe("running");

    // The thread id used again gets a fresh container.
    const again = await provider.acquire("gone", { userId: "alice" });
    expect((await provider.get(again)!.executeCommand("ls /mnt/user-data/workspace | wc -l")).stdout.trim()).toBe("0");
    expect(logs.filter((l) => l.includes("could not remove"))).toEqual([]);
  });

  it("the embedded client's deleteThread removes the thread's container too", async () => {
    const image = ensureTestImage();
    const dir = mkdtempSync(path.join(os.tmpdir(), "dfdock-del-"));
    dirs.push(dir);
    const rt = await DeerFlowRuntime.open({ configPath: writeConfig(dir, image, `dftest-${randomBytes(3).toString("hex")}`), cwd: dir, dataDir: path.join(dir, "d"), log: () => {} });
    runtimes.push(rt);
    const client = new DeerFlowClient(rt);
    const now = new Date().toISOString();
    await rt.stores.threads.create({ threadId: "client-thread", userId: client.userId, status: "idle", metadata: {}, displayName: null, createdAt: now, updatedAt: now });
    const id = await rt.sandboxProvider.acquire("client-thread", { userId: client.userId });
    await rt.sandboxProvider.get(id)!.executeCommand("true");
    await rt.sandboxProvider.release(id);
    const name = (rt.sandboxProvider as DockerSandboxProvider).containerNameFor("client-thread", client.userId);
    expect(state(name)).toBe("running");
    await client.deleteThread("client-thread");
    expect(state(name)).toBe("missing");
  });

  it("removes a container of the thread this process holds no entry for (another server process of the deployment created it)", async () => {
    const image = ensureTestImage();
    const dir = mkdtempSync(path.join(os.tmpdir(), "dfdock-del-"));
    dirs.push(dir);
    const prefix = `dftest-${randomBytes(3).toString("hex")}`;
    const config = writeConfig(dir, image, prefix);
    const a = await DeerFlowRuntime.open({ configPath: config, cwd: dir, dataDir: path.join(dir, "d"), log: () => {} });
    runtimes.push(a);
    const b = await DeerFlowRuntime.open({ configPath: config, cwd: dir, dataDir: path.join(dir, "d"), log: () => {} });
    runtimes.push(b);
    const id = await a.sandboxProvider.acquire("shared-thread");
    await a.sandboxProvider.get(id)!.executeCommand("true");
    await a.sandboxProvider.release(id);
    const name = (a.sandboxProvider as DockerSandboxProvider).containerNameFor("shared-thread");
    const keep = await a.sandboxProvider.acquire("kept-thread");
    await a.sandboxProvider.get(keep)!.executeCommand("true");
    const keptName = (a.sandboxProvider as DockerSandboxProvider).containerNameFor("kept-thread");
    expect(state(name)).toBe("running");
    await b.deleteThread("shared-thread", "default");
    expect(state(name)).toBe("missing");
    expect(state(keptName)).toBe("running");
  });
});
