import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createRemoteSandboxProvider, parseSandboxConfig, ProvisionerClient } from "@deerflow-ts/harness";
import { DockerBackend, KubernetesBackend, MAX_EXPIRY_SWEEP_MS, startProvisioner } from "../../src/provisioner";
import type { RunningProvisioner } from "../../src/provisioner";
import { dockerTestsEnabled, ensureTestImage, listLabelled, removeLabelled } from "../../../harness/test/sandbox/docker/test-image";
import { startRecordedK8sApi } from "./recorded-k8s-api";

const API_KEY = randomBytes(24).toString("hex");
const LABEL = "deerflow.test.provisioner";
const MIN = 60_000;

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe("provisioner idle expiry, Kubernetes backend (recorded API server)", () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
  });

  it("deletes the Pod, Service and NetworkPolicy of a sandbox no request reached for idle_timeout, keeps one in use", async () => {
    const api = await startRecordedK8sApi();
    closers.push(() => api.close());
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "recorded", server: api.url, skipTLSVerify: true }],
      users: [{ name: "provisioner", token: "recorded-sa-token" }],
      contexts: [{ name: "recorded", cluster: "recorded", user: "provisioner", namespace: "deer-flow" }],
      currentContext: "recorded",
    });
    const backend = new KubernetesBackend({ kubeConfig: kc, namespace: "deer-flow", image: "deerflow-sandbox:latest", imagePullPolicy: "IfNotPresent", config: parseSandboxConfig({ run_as_uid: 1000 }), serviceType: "ClusterIP", pollIntervalMs: 5 });
    const clock = manualClock();
    const prov = await startProvisioner({ backend, apiKey: API_KEY, host: "127.0.0.1", port: 0, idleTimeoutSeconds: 300, now: clock.now });
    closers.push(() => prov.close());
    const client = new ProvisionerClient(prov.url, API_KEY);
    await client.create({ sandboxId: "idle-a", threadId: "ta", userId: "u" });
    await client.create({ sandboxId: "idle-b", threadId: "tb", userId: "u" });
    clock.advance(200_000);
    await client.get("idle-b");
    clock.advance(101_000);
    expect(await prov.expiry.sweep()).toEqual(["idle-a"]);
    const deletes = api.calls.filter((c) => c.method === "DELETE").map((c) => c.path);
    expect(deletes).toEqual([
      "/api/v1/namespaces/deer-flow/services/sandbox-idle-a-svc",
      "/api/v1/namespaces/deer-flow/pods/sandbox-idle-a",
      "/apis/networking.k8s.io/v1/namespaces/deer-flow/networkpolicies/sandbox-idle-a-netpol",
    ]);
    expect((await client.list()).map((s) => s.sandbox_id)).toEqual(["idle-b"]);
    clock.advance(300_000);
    expect(await prov.expiry.sweep()).toEqual(["idle-b"]);
    expect(await client.list()).toEqual([]);
  });
});

const enabled = dockerTestsEnabled();

describe.skipIf(!enabled)("provisioner idle expiry, Docker backend (real Docker)", () => {
  const run = randomBytes(4).toString("hex");
  const dirs: string[] = [];
  let prov: RunningProvisioner | undefined;
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await prov?.close();
    removeLabelled(LABEL, run);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("on its timer (at most every 60 s) removes idle containers, never one whose command is still running; a server whose sandbox expired gets a new one", async () => {
    const image = ensureTestImage();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "dfprov-exp-"));
    const home = mkdtempSync(path.join(os.tmpdir(), "dfprov-exp-home-"));
    dirs.push(dataDir, home);
    const backend = new DockerBackend({ config: parseSandboxConfig({}), image, dataDir, containerPrefix: `dfexp-${run}`, labels: { [LABEL]: run } });
    const clock = manualClock();
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    prov = await startProvisioner({ backend, apiKey: API_KEY, host: "127.0.0.1", port: 0, idleTimeoutSeconds: 600, now: clock.now, log: () => {} });
    expect(prov.expiry.sweepIntervalMs).toBe(MAX_EXPIRY_SWEEP_MS);
    // The server side keeps its sandboxes for an hour: only the provisioner's expiry can remove them here.
    const provider = createRemoteSandboxProvider({ provisioner_url: prov.url, provisioner_api_key: API_KEY, idle_timeout: 3600 }, { baseDir: home, warn: () => {} });
    try {
      const idle = provider.get(await provider.acquire("t-idle"))!;
      await idle.writeFile("/mnt/user-data/workspace/old.txt", "old");
      const busy = provider.get(await provider.acquire("t-busy"))!;
      expect(listLabelled(LABEL, run)).toHaveLength(2);
      const running = busy.executeCommand("while [ ! -e /mnt/user-data/workspace/go ]; do sleep 0.05; done; echo done");

      clock.advance(11 * MIN);
      const sweep = vi.spyOn(prov.expiry, "sweep");
      vi.advanceTimersByTime(MAX_EXPIRY_SWEEP_MS);
      expect(sweep).toHaveBeenCalledTimes(1);
      const removed = await sweep.mock.results[0]!.value;
      expect(removed).toHaveLength(1);
      expect(listLabelled(LABEL, run)).toHaveLength(1);

      // The busy sandbox's command went on; once it ends, its sandbox's timeout starts from there.
      await busy.writeFile("/mnt/user-data/workspace/go", "");
      expect(await running).toMatchObject({ exitCode: 0, stdout: "done\n" });
      clock.advance(5 * MIN);
      expect(await prov.expiry.sweep()).toEqual([]);

      // The expired sandbox's server recreates it on its next command (its files are gone with it).
      const again = await idle.executeCommand("ls /mnt/user-data/workspace; echo back");
      expect(again.stdout).toBe("back\n");
      expect(listLabelled(LABEL, run)).toHaveLength(2);
      clock.advance(11 * MIN);
      expect(await prov.expiry.sweep()).toHaveLength(2);
      expect(listLabelled(LABEL, run)).toHaveLength(0);
    } finally {
      await provider.shutdown();
    }
  });
});
