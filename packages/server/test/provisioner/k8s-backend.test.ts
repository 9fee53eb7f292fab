import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { Pod, Service } from "kubernetes-models/v1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteSandboxProvider, EXEC_WRAPPER, parseSandboxConfig, ProvisionerClient, provisionerSandboxId, SandboxError } from "@deerflow-ts/harness";
import type { RemoteSandbox, RemoteSandboxProvider } from "@deerflow-ts/harness";
import { exitCodeOf, KubernetesBackend, startProvisioner } from "../../src/provisioner";
import type { RunningProvisioner } from "../../src/provisioner";
import { startRecordedK8sApi } from "./recorded-k8s-api";
import type { RecordedK8sApi } from "./recorded-k8s-api";

const API_KEY = randomBytes(24).toString("hex");

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "recorded", server, skipTLSVerify: true }],
    users: [{ name: "provisioner", token: "recorded-sa-token" }],
    contexts: [{ name: "recorded", cluster: "recorded", user: "provisioner", namespace: "deer-flow" }],
    currentContext: "recorded",
  });
  return kc;
}

function backendFor(api: RecordedK8sApi, sandbox: Record<string, unknown> = {}): KubernetesBackend {
  return new KubernetesBackend({
    kubeConfig: kubeConfigFor(api.url),
    namespace: "deer-flow",
    image: "deerflow-sandbox:latest",
    imagePullPolicy: "IfNotPresent",
    config: parseSandboxConfig({ run_as_uid: 1000, limits: { memory_bytes: 512 * 1024 * 1024, cpu_cores: 0.5, disk_quota_bytes: 1024 ** 3, tmp_size_bytes: 64 * 1024 * 1024 }, ...sandbox }),
    serviceType: "ClusterIP",
    skillsHostPath: "/srv/deerflow/skills",
    pollIntervalMs: 5,
  });
}

/** Emulates the exec wrapper: pid line first, output, then `NONCE STATUS` on stderr; the wrapper then kills its own group (137). */
function wrapperReply(argv: string[], io: { stdout(s: string): void; stderr(s: string): void; finish(code: number | null): void }, out: string, err: string, status: number): void {
  const nonce = argv[4];
  io.stdout(`4242\n${out}`);
  io.stderr(`${err}${nonce} ${status}\n`);
  io.finish(137);
}

describe("provisioner Kubernetes backend against a recorded API server", () => {
  let api: RecordedK8sApi;
  let provisioner: RunningProvisioner;
  let provider: RemoteSandboxProvider;
  let baseDir = "";

  beforeAll(async () => {
    api = await startRecordedK8sApi();
    provisioner = await startProvisioner({ backend: backendFor(api), apiKey: API_KEY, host: "127.0.0.1", port: 0 });
    baseDir = mkdtempSync(path.join(os.tmpdir(), "dfk8s-"));
    provider = createRemoteSandboxProvider({ provisioner_url: provisioner.url, provisioner_api_key: API_KEY, idle_timeout: 0 }, { baseDir, warn: () => {} });
  });

  afterAll(async () => {
    await provider?.shutdown();
    await provisioner?.close();
    await api?.close();
    rmSync(baseDir, { recursive: true, force: true });
  });

  it("creates a NetworkPolicy, then the Pod and its Service, hardened and valid per kubernetes-models", async () => {
    const client = new ProvisionerClient(provisioner.url, API_KEY);
    const first = api.calls.length;
    const res = await client.create({ sandboxId: "k8s-a", threadId: "ta", userId: "alice" });
    expect(res).toMatchObject({ sandbox_id: "k8s-a", status: "Running", sandbox_url: `${provisioner.url}/sandboxes/k8s-a` });
    expect(res.sandbox_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const calls = api.calls.slice(first).map((c) => `${c.method} ${c.path}`);
    expect(calls.slice(0, 4)).toEqual([
      "GET /api/v1/namespaces/deer-flow/pods/sandbox-k8s-a",
      "POST /apis/networking.k8s.io/v1/namespaces/deer-flow/networkpolicies",
      "POST /api/v1/namespaces/deer-flow/pods",
      "POST /api/v1/namespaces/deer-flow/services",
    ]);
    // Pending at creation, Running on a later read: create waited for it.
    expect(calls.slice(4).every((c) => c === "GET /api/v1/namespaces/deer-flow/pods/sandbox-k8s-a")).toBe(true);
    expect(api.calls.every((c) => c.authorization === "Bearer recorded-sa-token")).toBe(true);

    const pod = api.calls.find((c) => c.method === "POST" && c.path.endsWith("/pods"))?.body as Record<string, any>;
    new Pod(pod as never).validate();
    new Service(api.calls.find((c) => c.method === "POST" && c.path.endsWith("/services"))?.body as never).validate();
    const policy = api.calls.find((c) => c.method === "POST" && c.path.endsWith("/networkpolicies"))?.body as Record<string, any>;
    new NetworkPolicy(policy as never).validate();

    expect(pod.metadata.name).toBe("sandbox-k8s-a");
    expect(pod.metadata.labels).toMatchObject({ app: "deer-flow-sandbox", "sandbox-id": "k8s-a" });
    expect(pod.metadata.annotations["deerflow.provisioner/user-id"]).toBe("alice");
    expect(JSON.stringify(pod)).not.toContain(res.sandbox_token as string);
    const spec = pod.spec;
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } });
    const c = spec.containers[0];
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, privileged: false, capabilities: { drop: ["ALL"] } });
    expect(c.resources.limits).toMatchObject({ cpu: "500m", memory: String(512 * 1024 * 1024) });
    expect(c.command).toEqual(["/bin/sh", "-c", expect.stringContaining("sleep")]);
    expect(c.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: "tmp", mountPath: "/tmp" },
        { name: "workspace", mountPath: "/mnt/user-data/workspace" },
        { name: "skills", mountPath: "/mnt/skills", readOnly: true },
      ]),
    );
    expect(spec.volumes.find((v: { name: string }) => v.name === "tmp").emptyDir).toEqual({ medium: "Memory", sizeLimit: String(64 * 1024 * 1024) });
    expect(policy.spec).toEqual({ podSelector: { matchLabels: { "sandbox-id": "k8s-a" } }, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] });

    // Idempotent: the same sandbox and token, nothing created again.
    const before = api.calls.filter((x) => x.method === "POST").length;
    expect((await client.create({ sandboxId: "k8s-a", threadId: "ta", userId: "alice" })).sandbox_token).toBe(res.sandbox_token);
    expect(api.calls.filter((x) => x.method === "POST").length).toBe(before);
    expect((await client.list()).map((s) => s.sandbox_id)).toEqual(["k8s-a"]);

    await client.delete("k8s-a");
    const deletes = api.calls.filter((x) => x.method === "DELETE").map((x) => x.path);
    expect(deletes).toEqual([
      "/api/v1/namespaces/deer-flow/services/sandbox-k8s-a-svc",
      "/api/v1/namespaces/deer-flow/pods/sandbox-k8s-a",
      "/apis/networking.k8s.io/v1/namespaces/deer-flow/networkpolicies/sandbox-k8s-a-netpol",
    ]);
    expect(await client.get("k8s-a")).toBeUndefined();
    expect(await client.list()).toEqual([]);
  });

  it("runs commands and file operations through the exec API (v5 channels, stdin closed for writes)", async () => {
    api.setExecResponder((exec, io) => {
      const cmd = exec.argv[5] ?? "";
      if (exec.argv[3] === "deerflow-exec" && cmd.endsWith("\necho hello")) return wrapperReply(exec.argv, io, "hello\n", "", 0);
      if (exec.argv[3] === "deerflow-exec" && cmd.endsWith("\nfalse")) return wrapperReply(exec.argv, io, "", "oops\n", 3);
      io.finish(1);
    });

    const id = await provider.acquire("tk", { userId: "bob" });
    const sb = provider.get(id) as RemoteSandbox;
    const ok = await sb.executeCommand("echo hello", { env: { GREETING: "it's" } });
    expect(ok).toEqual({ stdout: "hello\n", stderr: "", exitCode: 0, timedOut: false, truncated: false });
    const run = api.execs.find((e) => e.argv[5]?.endsWith("\necho hello"));
    expect(run?.pod).toBe(`sandbox-${provisionerSandboxId("bob", "tk")}`);
    expect(run?.argv.slice(0, 4)).toEqual(["/bin/sh", "-c", EXEC_WRAPPER, "deerflow-exec"]);
    expect(run?.argv[5]).toContain("export GREETING='it'\\''s'");
    expect(run?.argv[5]).toContain("cd '/mnt/user-data/workspace' || exit 126");
    expect(run?.protocol).toBe("v5.channel.k8s.io");

    expect(await sb.executeCommand("false")).toMatchObject({ stdout: "", stderr: "oops\n", exitCode: 3 });

    // Timeout: the group the wrapper reported is killed from a second exec.
    api.setExecResponder((exec, io) => {
      if (exec.argv[3] === "deerflow-exec") return io.stdout("4243\n");
      if (exec.argv[3] === "deerflow-kill") {
        io.finish(0);
        return;
      }
      io.finish(1);
    });
    const slow = await sb.executeCommand("sleep 30", { timeoutMs: 200 });
    expect(slow).toMatchObject({ timedOut: true, exitCode: 137 });
    const kill = api.execs.find((e) => e.argv[3] === "deerflow-kill");
    expect(kill?.argv.slice(3)).toEqual(["deerflow-kill", "4243"]);

    api.setExecResponder((exec, io) => {
      const script = exec.argv[2];
      if (exec.argv[3] === "deerflow-file" && script.includes("exec cat >")) return io.onStdinClosed(() => io.finish(0));
      if (exec.argv[3] === "deerflow-file" && script.includes('exec cat -- "$t"')) {
        if (exec.argv[5].endsWith("missing.txt")) return io.finish(92);
        io.stdout(Buffer.from([0, 1, 2, 255]));
        return io.finish(0);
      }
      io.finish(1);
    });
    const payload = randomBytes(70_000);
    await sb.updateFile("/mnt/user-data/workspace/blob.bin", payload);
    const write = api.execs.filter((e) => e.argv[3] === "deerflow-file" && e.argv[2].includes("exec cat >")).at(-1);
    expect(write?.argv.slice(4)).toEqual(["/mnt/user-data/workspace", "/mnt/user-data/workspace/blob.bin", "0"]);
    expect(write?.stdinClosed).toBe(true);
    expect(write?.stdin.equals(payload)).toBe(true);
    expect(Buffer.from(await sb.readFileBytes("/mnt/user-data/workspace/x.bin"))).toEqual(Buffer.from([0, 1, 2, 255]));
    const missing = await sb.readFile("/mnt/user-data/workspace/missing.txt").catch((e: unknown) => e);
    expect((missing as SandboxError).code).toBe("file_not_found");
    await provider.release(id);
    expect(api.objects.size).toBe(0);
  });

  it("refuses an allowlist network before creating anything, and reports an unreachable cluster by its URL", async () => {
    const other = await startRecordedK8sApi();
    try {
      const backend = backendFor(other, { network: { mode: "allowlist", allow: ["example.com"] } });
      const err = await backend.create({ sandbox_id: "nope", user_id: "default", extra_mounts: [] } as never, "n").catch((e: unknown) => e);
      expect((err as SandboxError).code).toBe("sandbox_network_unsupported");
      expect(other.calls.filter((c) => c.method === "POST")).toEqual([]);
    } finally {
      await other.close();
    }
    const down = backendFor(await startRecordedK8sApi().then(async (a) => (await a.close(), a)));
    const err = await down.start().catch((e: unknown) => e);
    expect((err as SandboxError).code).toBe("kubernetes_unreachable");
    expect((err as Error).message).toMatch(/Kubernetes API at http:\/\/127\.0\.0\.1:\d+ is unreachable/);
  });

  it("reads exit codes from the exec status", () => {
    expect(exitCodeOf({ status: "Success" })).toBe(0);
    expect(exitCodeOf({ status: "Failure", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "7" }] } })).toBe(7);
    expect(exitCodeOf(undefined)).toBe(-1);
  });
});
