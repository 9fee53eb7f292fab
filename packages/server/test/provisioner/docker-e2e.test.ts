import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRemoteSandboxProvider,
  createSandboxTools,
  parseSandboxConfig,
  PathAccessError,
  ProvisionerClient,
  provisionerSandboxId,
  SandboxError,
} from "@deerflow-ts/harness";
import type { RemoteSandbox, RemoteSandboxProvider } from "@deerflow-ts/harness";
import { DockerBackend, startProvisioner } from "../../src/provisioner";
import type { RunningProvisioner } from "../../src/provisioner";
import { dockerTestsEnabled, ensureTestImage, listLabelled, removeLabelled } from "../../../harness/test/sandbox/docker/test-image";
import { fakeToolRuntime } from "../../../harness/test/sandbox/helpers";

const enabled = dockerTestsEnabled();
const LABEL = "deerflow.test.provisioner";
const run = randomBytes(4).toString("hex");
const API_KEY = randomBytes(24).toString("hex");

describe.skipIf(!enabled)("provisioner with its Docker backend, end to end", () => {
  let dataDir = "";
  let baseDir = "";
  let provisioner: RunningProvisioner;
  let provider: RemoteSandboxProvider;

  beforeAll(async () => {
    const image = ensureTestImage();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "dfprov-data-"));
    baseDir = mkdtempSync(path.join(os.tmpdir(), "dfprov-home-"));
    const config = parseSandboxConfig({ limits: { memory_bytes: 256 * 1024 * 1024, processes: 64, tmp_size_bytes: 64 * 1024 * 1024 } });
    const backend = new DockerBackend({ config, image, dataDir, containerPrefix: `dfprov-${run}`, labels: { [LABEL]: run } });
    provisioner = await startProvisioner({ backend, apiKey: API_KEY, host: "127.0.0.1", port: 0, maxOutputBytes: 64 * 1024 });
    provider = createRemoteSandboxProvider(
      { provisioner_url: provisioner.url, provisioner_api_key: "$DF_TEST_PROVISIONER_KEY", idle_timeout: 0, bash_command_timeout: 60 },
      { baseDir, env: { DF_TEST_PROVISIONER_KEY: API_KEY }, warn: () => {} },
    );
  }, 180_000);

  afterAll(async () => {
    await provider?.shutdown();
    await provisioner?.close();
    removeLabelled(LABEL, run);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(baseDir, { recursive: true, force: true });
  });

  it("creates a hardened container, runs commands as non-root with timeout and cancellation", async () => {
    const id = await provider.acquire("t-exec");
    const sb = provider.get(id) as RemoteSandbox;
    expect(sb.kind).toBe("remote");
    expect(sb.sandboxUrl).toBe(`${provisioner.url}/sandboxes/${provisionerSandboxId("default", "t-exec")}`);
    const res = await sb.executeCommand("echo hi; id -u; pwd; echo err >&2; exit 3");
    expect(res.stdout.split("\n").slice(0, 3)).toEqual(["hi", expect.stringMatching(/^[1-9]\d*$/), "/mnt/user-data/workspace"]);
    expect(res.stderr).toBe("err\n");
    expect(res.exitCode).toBe(3);
    expect(listLabelled(LABEL, run)).toHaveLength(1);

    const t0 = Date.now();
    const slow = await sb.executeCommand("sleep 30", { timeoutMs: 1000 });
    expect(slow.timedOut).toBe(true);
    expect(Date.now() - t0).toBeLessThan(15_000);

    // Cancel: the command announces itself in a file, the test waits for that file, then aborts.
    const ctl = new AbortController();
    const pending = sb.executeCommand("echo started > /tmp/cancel-me; sleep 30; echo never", { signal: ctl.signal });
    for (let i = 0; i < 200 && !(await sb.executeCommand("test -f /tmp/cancel-me && echo yes")).stdout.includes("yes"); i++);
    ctl.abort();
    const cancelled = await pending;
    expect(cancelled.stdout).not.toContain("never");
    expect(cancelled.exitCode).not.toBe(0);
    // The server side killed it: no `sleep 30` left in the container (bounded wait for the kill to land).
    let left = "";
    for (let i = 0; i < 100; i++) {
      left = (await sb.executeCommand("ps -eo args | grep '^sleep 30' || true")).stdout.trim();
      if (left === "") break;
    }
    expect(left).toBe("");
    await provider.release(id);
  });

  it("file tools go through the command API with the host tools' path guards", async () => {
    const id = await provider.acquire("t-files");
    const sb = provider.get(id) as RemoteSandbox;
    await sb.writeFile("/mnt/user-data/workspace/dir/a.txt", "alpha\nbeta\n");
    await sb.writeFile("/mnt/user-data/workspace/dir/a.txt", "gamma\n", { append: true });
    expect(await sb.readFile("/mnt/user-data/workspace/dir/a.txt")).toBe("alpha\nbeta\ngamma\n");
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await sb.updateFile("/mnt/user-data/workspace/bin.dat", bytes);
    expect(Buffer.from(await sb.readFileBytes("/mnt/user-data/workspace/bin.dat")).equals(Buffer.from(bytes))).toBe(true);
    await sb.writeFile("/mnt/user-data/workspace/node_modules/x/skip.txt", "beta\n");

    const listing = await sb.listDir("/mnt/user-data/workspace", 2);
    expect(listing).toEqual([
      { path: "/mnt/user-data/workspace/bin.dat", isDir: false, depth: 1 },
      { path: "/mnt/user-data/workspace/dir", isDir: true, depth: 1 },
      { path: "/mnt/user-data/workspace/dir/a.txt", isDir: false, depth: 2 },
      { path: "/mnt/user-data/workspace/node_modules", isDir: true, depth: 1 },
    ]);
    expect(await sb.glob("/mnt/user-data/workspace", "**/*.txt")).toEqual({ items: ["/mnt/user-data/workspace/dir/a.txt"], truncated: false });
    expect(await sb.grep("/mnt/user-data/workspace", "BETA")).toEqual({ items: [{ path: "/mnt/user-data/workspace/dir/a.txt", line: 2, text: "beta" }], truncated: false });
    expect((await sb.grep("/mnt/user-data/workspace/dir/a.txt", "^g")).items).toEqual([{ path: "/mnt/user-data/workspace/dir/a.txt", line: 3, text: "gamma" }]);
    const st = await sb.stat("/mnt/user-data/workspace/dir/a.txt");
    expect(st).toMatchObject({ isFile: true, isDir: false, size: 17 });
    expect(await sb.stat("/mnt/user-data/workspace/missing")).toBeNull();
    expect(await sb.exists("/mnt/user-data/workspace/dir")).toBe(true);

    const denied = async (p: Promise<unknown>) => {
      const err = await p.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(PathAccessError);
      return (err as Error).message;
    };
    expect(await denied(sb.readFile("/etc/passwd"))).toMatch(/only paths under/);
    expect(await denied(sb.readFile("/mnt/user-data/workspace/../../../etc/passwd"))).toMatch(/traversal/);
    expect(await denied(sb.writeFile("/mnt/user-data/new.txt", "x"))).toMatch(/read-only/);
    expect(await denied(sb.writeFile("/mnt/skills/x.md", "x"))).toMatch(/read-only/);
    await sb.executeCommand("ln -s /etc /mnt/user-data/workspace/esc && ln -s /etc/passwd /mnt/user-data/workspace/pw");
    expect(await denied(sb.readFile("/mnt/user-data/workspace/esc/passwd"))).toMatch(/outside the allowed directories/);
    expect(await denied(sb.readFile("/mnt/user-data/workspace/pw"))).toMatch(/outside the allowed directories/);
    expect(await denied(sb.writeFile("/mnt/user-data/workspace/esc/evil", "x"))).toMatch(/outside the allowed directories/);
    const missing = await sb.readFile("/mnt/user-data/workspace/nope.txt").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SandboxError);
    expect((missing as SandboxError).code).toBe("file_not_found");

    // The sandbox tools (what a run calls) work unchanged on top.
    const tools = createSandboxTools({ provider, includeBash: true });
    const bash = tools.find((t) => t.name === "bash");
    const out = (await bash?.execute({ description: "d", command: "cat dir/a.txt | wc -l" }, fakeToolRuntime("t-files"))) as string;
    expect(String(out).trim()).toBe("3");
    await provider.release(id);
  });

  it("pushes uploads on acquire, pulls outputs on release, and deletes the sandbox after idle_timeout (0)", async () => {
    const uploads = path.join(baseDir, "users", "default", "threads", "t-sync", "user-data", "uploads");
    mkdirSync(uploads, { recursive: true });
    writeFileSync(path.join(uploads, "report.csv"), "a,b\n1,2\n");
    const id = await provider.acquire("t-sync");
    const sb = provider.get(id) as RemoteSandbox;
    expect(await sb.readFile("/mnt/user-data/uploads/report.csv")).toBe("a,b\n1,2\n");
    expect((await sb.executeCommand("mkdir -p /mnt/user-data/outputs/sub && wc -l < /mnt/user-data/uploads/report.csv > /mnt/user-data/outputs/sub/lines.txt")).exitCode).toBe(0);
    const sandboxId = provisionerSandboxId("default", "t-sync");
    const client = new ProvisionerClient(provisioner.url, API_KEY);
    expect((await client.list()).map((s) => s.sandbox_id)).toContain(sandboxId);
    expect(await client.get(sandboxId)).toMatchObject({ sandbox_id: sandboxId, status: "Running" });

    await provider.release(id);
    const pulled = path.join(baseDir, "users", "default", "threads", "t-sync", "user-data", "outputs", "sub", "lines.txt");
    expect(readFileSync(pulled, "utf8").trim()).toBe("2");
    expect(provider.get(id)).toBeUndefined();
    expect(await client.get(sandboxId)).toBeUndefined();
    expect((await client.list()).map((s) => s.sandbox_id)).not.toContain(sandboxId);
    expect(existsSync(path.join(dataDir, "sandboxes", sandboxId))).toBe(false);
  });

  it("refuses a wrong API key, a wrong sandbox token and another sandbox's token", async () => {
    const client = new ProvisionerClient(provisioner.url, API_KEY);
    const a = await client.create({ sandboxId: "authtest-a", threadId: "ta", userId: "default" });
    const b = await client.create({ sandboxId: "authtest-b", threadId: "tb", userId: "default" });
    expect(a.sandbox_token).toBeDefined();
    expect(a.sandbox_token).not.toBe(b.sandbox_token);
    // Idempotent create: same sandbox, same token.
    expect((await client.create({ sandboxId: "authtest-a", threadId: "ta", userId: "default" })).sandbox_token).toBe(a.sandbox_token);

    for (const key of [undefined, "wrong-key-0123456789", `${API_KEY}x`]) {
      const res = await fetch(`${provisioner.url}/api/sandboxes`, { headers: key ? { "X-API-Key": key } : {} });
      expect(res.status).toBe(401);
    }
    const wrongKey = await new ProvisionerClient(provisioner.url, "not-the-key-at-all").list().catch((e: unknown) => e);
    expect((wrongKey as SandboxError).code).toBe("remote_unauthorized");
    expect((wrongKey as Error).message).not.toContain(API_KEY);

    const exec = (url: string, token?: string) =>
      fetch(`${url}/v1/exec`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { "X-Sandbox-Token": token } : {}) },
        body: JSON.stringify({ command: "echo hi" }),
      });
    expect((await exec(a.sandbox_url, a.sandbox_token)).status).toBe(200);
    expect((await exec(a.sandbox_url)).status).toBe(401);
    expect((await exec(a.sandbox_url, "x".repeat(43))).status).toBe(401);
    expect((await exec(b.sandbox_url, a.sandbox_token)).status).toBe(401);
    // The API key is not a sandbox token.
    expect((await exec(a.sandbox_url, API_KEY)).status).toBe(401);

    // Deleted and recreated under the same id: the old token no longer opens it.
    await client.delete("authtest-a");
    const a2 = await client.create({ sandboxId: "authtest-a", threadId: "ta", userId: "default" });
    expect(a2.sandbox_token).not.toBe(a.sandbox_token);
    expect((await exec(a.sandbox_url, a.sandbox_token)).status).toBe(401);
    await client.delete("authtest-a");
    await client.delete("authtest-b");
    expect((await client.list()).filter((s) => s.sandbox_id.startsWith("authtest-"))).toEqual([]);
  });

  it("recreates a sandbox whose container died, on the next command", async () => {
    const id = await provider.acquire("t-dead");
    const sb = provider.get(id) as RemoteSandbox;
    await sb.writeFile("/mnt/user-data/workspace/keep.txt", "kept");
    const name = `dfprov-${run}-${provisionerSandboxId("default", "t-dead")}`;
    execFileSync("docker", ["rm", "-f", name], { stdio: "ignore" });
    const res = await sb.executeCommand("cat /mnt/user-data/workspace/keep.txt");
    expect(res).toMatchObject({ stdout: "kept", exitCode: 0 });
    await provider.release(id);
  });
});
