import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowRuntime, parseSandboxConfig, ProvisionerClient, provisionerSandboxId, RemoteSandboxProvider } from "@deerflow-ts/harness";
import { DockerBackend, startProvisioner } from "../../src/provisioner";
import type { RunningProvisioner } from "../../src/provisioner";
import { dockerTestsEnabled, ensureTestImage, listLabelled, removeLabelled } from "../../../harness/test/sandbox/docker/test-image";

const enabled = dockerTestsEnabled();
const LABEL = "deerflow.test.provisioner";
const run = randomBytes(4).toString("hex");
const API_KEY = randomBytes(24).toString("hex");
const KEY_VAR = `DF_TEST_PROV_KEY_${run}`;

describe.skipIf(!enabled)("deleting a thread deletes its remote sandbox (provisioner with the Docker backend)", () => {
  let dir = "";
  let provisioner: RunningProvisioner;
  let runtime: DeerFlowRuntime;

  beforeAll(async () => {
    const image = ensureTestImage();
    dir = mkdtempSync(path.join(os.tmpdir(), "dfprov-del-"));
    const backend = new DockerBackend({ config: parseSandboxConfig({}), image, dataDir: path.join(dir, "prov"), containerPrefix: `dfprov-${run}`, labels: { [LABEL]: run } });
    provisioner = await startProvisioner({ backend, apiKey: API_KEY, host: "127.0.0.1", port: 0 });
    process.env[KEY_VAR] = API_KEY;
    const file = path.join(dir, "config.yaml");
    writeFileSync(
      file,
      [
        "models:",
        "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }",
        "sandbox:",
        "  use: deerflow.community.aio_sandbox:AioSandboxProvider",
        `  provisioner_url: ${provisioner.url}`,
        `  provisioner_api_key: $${KEY_VAR}`,
        // An hour: only the deletion can remove the sandbox within this test.
        "  idle_timeout: 3600",
        "",
      ].join("\n"),
    );
    runtime = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "home"), log: () => {} });
  }, 180_000);

  afterAll(async () => {
    await runtime?.close();
    await provisioner?.close();
    delete process.env[KEY_VAR];
    removeLabelled(LABEL, run);
    rmSync(dir, { recursive: true, force: true });
  });

  it("DELETEs the deleted thread's sandbox at once and leaves another thread's sandbox and its running command alone", async () => {
    const provider = runtime.sandboxProvider;
    expect(provider).toBeInstanceOf(RemoteSandboxProvider);
    const client = new ProvisionerClient(provisioner.url, API_KEY);
    const gone = await provider.acquire("gone-thread");
    expect((await provider.get(gone)!.executeCommand("echo hi")).stdout).toBe("hi\n");
    await provider.release(gone);
    const other = await provider.acquire("other-thread");
    const otherSandbox = provider.get(other)!;
    // (The list holds every sandbox of the provisioner's Docker daemon; this test's carry its label.)
    const ids = (await client.list()).map((s) => s.sandbox_id);
    expect(ids).toEqual(expect.arrayContaining([provisionerSandboxId("default", "gone-thread"), provisionerSandboxId("default", "other-thread")]));
    expect(listLabelled(LABEL, run)).toHaveLength(2);

    const running = otherSandbox.executeCommand("while [ ! -e /mnt/user-data/workspace/go ]; do sleep 0.05; done; echo other-finished");
    await runtime.deleteThread("gone-thread", "default");
    expect(await client.get(provisionerSandboxId("default", "gone-thread"))).toBeUndefined();
    expect(provider.get(gone)).toBeUndefined();
    expect(listLabelled(LABEL, run)).toHaveLength(1);

    await otherSandbox.writeFile("/mnt/user-data/workspace/go", "");
    expect(await running).toMatchObject({ exitCode: 0, stdout: "other-finished\n" });
    expect(await client.get(provisionerSandboxId("default", "other-thread"))).toMatchObject({ status: "Running" });
  });

  it("DELETEs the thread's sandbox even when this process never held it (another server process created it)", async () => {
    const client = new ProvisionerClient(provisioner.url, API_KEY);
    const sandboxId = provisionerSandboxId("bob", "elsewhere");
    await client.create({ sandboxId, threadId: "elsewhere", userId: "bob" });
    expect(await client.get(sandboxId)).toMatchObject({ status: "Running" });
    await runtime.deleteThread("elsewhere", "bob");
    expect(await client.get(sandboxId)).toBeUndefined();
  });
});
