import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSandboxConfig } from "@deerflow-ts/harness/sandbox";
import { buildImageFromHost } from "@deerflow-ts/harness/sandbox/image";
import { dockerAvailable, minimalHostImage } from "../../../harness/test/sandbox/image/helpers";
import { dockerFindings, sandboxUseFinding } from "../../src/commands/doctor-docker";
import { BIN, cleanEnv, runCli, tempDir } from "../helpers";

describe("doctor: sandbox.use", () => {
  it("accepts every provider name we implement and DeerFlow's AIO class path", () => {
    for (const use of ["", "auto", "local", "bwrap", "docker", "deerflow.sandbox.local:LocalSandboxProvider", "deerflow.community.aio_sandbox:AioSandboxProvider"]) {
      expect(sandboxUseFinding(use), use).toBeUndefined();
    }
  });

  it("is an error for a provider nobody implements", () => {
    expect(sandboxUseFinding("e2b")).toMatchObject({ check: "sandbox", level: "error", message: expect.stringContaining("'e2b' is not a supported sandbox provider") });
  });

  it("does not look at Docker unless the Docker provider is selected", async () => {
    expect(await dockerFindings(parseSandboxConfig({ use: "bwrap" }), {}, 2000)).toEqual([]);
  });
});

describe("doctor: no Docker daemon", () => {
  it("names a DOCKER_HOST socket that does not exist", async () => {
    const dead = path.join(tempDir("df-doc-dead-"), "docker.sock");
    const f = await dockerFindings(parseSandboxConfig({ use: "docker" }), { DOCKER_HOST: `unix://${dead}` }, 5000);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ check: "docker", level: "error", message: `no Docker daemon answers at unix://${dead} (DOCKER_HOST): no socket there` });
    expect(f[0]!.fix).toContain("DOCKER_HOST");
  });

  it.skipIf(!existsSync("/usr/bin/python3"))("says nothing listens on a socket file whose daemon is gone", async () => {
    const sock = path.join(tempDir("df-doc-closed-"), "docker.sock");
    // a socket bound and closed again: the file stays, connecting is refused
    const made = spawnSync("/usr/bin/python3", ["-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()", sock]);
    expect(made.status).toBe(0);
    const f = await dockerFindings(parseSandboxConfig({ use: "deerflow.community.aio_sandbox:AioSandboxProvider" }), { DOCKER_HOST: `unix://${sock}` }, 5000);
    expect(f).toEqual([expect.objectContaining({ level: "error", message: `no Docker daemon answers at unix://${sock} (DOCKER_HOST): nothing listens on it (connection refused)` })]);
  });
});

const DOCKER = dockerAvailable("doctor docker tests");

function writeProject(sandbox: string[]): string {
  const dir = tempDir("df-doc-docker-");
  chmodSync(dir, 0o777);
  writeFileSync(path.join(dir, "config.yaml"), ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", ...sandbox.map((l) => `  ${l}`), ""].join("\n"));
  return dir;
}

function doctorContainers(): string[] {
  return spawnSync("docker", ["ps", "-aq", "--filter", "label=deerflow.sandbox.role=doctor"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
}

describe.skipIf(!DOCKER)("doctor: a real Docker daemon", () => {
  let image: string;
  beforeAll(async () => {
    image = await minimalHostImage();
  }, 120_000);
  afterAll(() => {
    const left = doctorContainers();
    if (left.length) spawnSync("docker", ["rm", "-f", ...left], { stdio: "ignore" });
  });

  it("all fine: the daemon, the image, a hardened container from it; deerflow doctor exits 0", async () => {
    const f = await dockerFindings(parseSandboxConfig({ use: "docker", image }), {}, 20_000);
    expect(f.map((x) => x.level)).toEqual(["ok", "ok", "ok"]);
    expect(f[0]!.message).toMatch(/^Docker \S+ answers at unix:\/\/\/var\/run\/docker\.sock$/);
    expect(f[1]!.message).toContain(`image ${image} is present`);
    expect(f[2]!.message).toContain("a hardened sandbox container starts from");
    expect(doctorContainers()).toEqual([]);

    const cwd = writeProject(["use: deerflow.community.aio_sandbox:AioSandboxProvider", `image: ${image}`]);
    const r = await runCli(["doctor", "--skip-model", "--data-dir", path.join(cwd, "data")], { cwd, env: cleanEnv({ DOCKER_HOST: undefined }), timeoutMs: 90_000 });
    expect(r.stdout, r.stderr).toContain(`✓ docker: image ${image} is present`);
    expect(r.stdout).toContain("No problems found");
    expect(r.code).toBe(0);
  }, 120_000);

  it("a missing image is named by its reference with the command that builds it; doctor exits 1", async () => {
    const missing = "deerflow-test-doctor-missing:nope";
    const f = await dockerFindings(parseSandboxConfig({ use: "docker", image: missing }), {}, 20_000);
    expect(f.map((x) => x.level)).toEqual(["ok", "error"]);
    expect(f[1]!.message).toBe(`the sandbox image '${missing}' is not present on unix:///var/run/docker.sock (sandbox.image); the sandbox never pulls images`);
    expect(f[1]!.fix).toContain(`deerflow sandbox image build --tag ${missing}`);
    expect(f[1]!.fix).toContain("--from-host");

    const def = await dockerFindings(parseSandboxConfig({ use: "docker" }), {}, 20_000);
    if (def[1]?.level === "error") expect(def[1].message).toContain("'deerflow-sandbox:latest' is not present");

    const cwd = writeProject(["use: docker", `image: ${missing}`]);
    const r = await runCli(["doctor", "--skip-model", "--data-dir", path.join(cwd, "data")], { cwd, env: cleanEnv({ DOCKER_HOST: undefined }), timeoutMs: 90_000 });
    expect(r.stdout, r.stderr).toContain(`✗ docker: the sandbox image '${missing}' is not present`);
    expect(r.code).toBe(1);
  }, 120_000);

  it("an image without sleep (which keeps the container alive) is an error", async () => {
    const bare = "deerflow-test-doctor-nosleep:host";
    await buildImageFromHost({ tag: bare, rootfs: { programs: ["sh", "cat"] } });
    const f = await dockerFindings(parseSandboxConfig({ use: "docker", image: bare }), {}, 20_000);
    expect(f.map((x) => x.level)).toEqual(["ok", "ok", "error"]);
    expect(f[2]!.message).toMatch(/cannot start a sandbox container|lacks what the provider needs/);
    expect(doctorContainers()).toEqual([]);
  }, 120_000);

  const canDrop = process.getuid?.() === 0 && existsSync("/usr/bin/setpriv") && existsSync("/var/run/docker.sock") && (spawnSync("stat", ["-c", "%a", "/var/run/docker.sock"], { encoding: "utf8" }).stdout.trim().endsWith("0"));
  it.skipIf(!canDrop)("permission denied on the socket names the socket, its group and the fix", async () => {
    const cwd = writeProject(["use: docker", `image: ${image}`]);
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn("/usr/bin/setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, BIN, "doctor", "--skip-model", "--data-dir", path.join(cwd, "data")], {
        cwd,
        env: cleanEnv({ DOCKER_HOST: undefined, HOME: cwd }),
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stdout, r.stderr).toContain("✗ docker: permission denied opening the Docker socket /var/run/docker.sock");
    expect(r.stdout).toMatch(/fix: \/var\/run\/docker\.sock is owned by uid 0, (group '\S+' \(gid \d+\)|gid \d+), mode \d{3}; uid 65534/);
    expect(r.stdout).toContain("usermod -aG");
    expect(r.code).toBe(1);
  }, 120_000);
});
