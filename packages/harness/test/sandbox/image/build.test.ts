import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxError } from "../../../src/errors";
import { buildImageFromDockerfile, buildImageFromHost, dockerfileBaseImages, IMAGE_BUILD_LABEL, IMAGE_CONTENT_LABEL, SANDBOX_DOCKERFILE } from "../../../src/sandbox/image";
import { dockerAvailable, removeTestContainers, runHardened } from "./helpers";

describe("dockerfileBaseImages", () => {
  it("resolves FROM through ARG defaults and declared build args, and leaves out scratch", () => {
    const text = "ARG BASE_IMAGE=debian:bookworm-slim\nARG OTHER\nFROM ${BASE_IMAGE} AS one\nFROM --platform=linux/amd64 $OTHER\nFROM scratch\n";
    expect(dockerfileBaseImages(text, { OTHER: "alpine:3" })).toEqual(["debian:bookworm-slim", "alpine:3"]);
    expect(dockerfileBaseImages(text, { BASE_IMAGE: "ubuntu:24.04", OTHER: "x" })).toEqual(["ubuntu:24.04", "x"]);
  });
});

const DOCKER = dockerAvailable("sandbox image tests");
const TAG = "deerflow-test-host-image:latest";

describe.skipIf(!DOCKER)("sandbox image builds (real Docker)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    removeTestContainers();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("--from-host: an image whose python3 runs as uid 1000 on a read-only root, reused while the host is unchanged", async () => {
    const lines: string[] = [];
    const built = await buildImageFromHost({ tag: TAG, log: (l) => lines.push(l) });
    expect(built.ref).toBe(TAG);
    expect(built.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(built.plan?.pythonVersion).toMatch(/^3\./);
    const inspect = JSON.parse(spawnSync("docker", ["image", "inspect", TAG], { encoding: "utf8" }).stdout)[0];
    expect(inspect.Config.Labels[IMAGE_CONTENT_LABEL]).toBe(built.plan?.contentKey);
    expect(inspect.Config.Labels[IMAGE_BUILD_LABEL]).toBe("host");

    const py = runHardened(TAG, ["python3", "-c", "print(1)"]);
    expect(py.stderr).toBe("");
    expect(py).toMatchObject({ status: 0, stdout: "1\n" });
    const who = runHardened(TAG, ["/bin/sh", "-c", "id -u; whoami; touch /etc/x 2>/dev/null || echo read-only; echo ok > /tmp/t && cat /tmp/t; bash -c 'echo bash'"]);
    expect(who.stdout).toBe("1000\nsandbox\nread-only\nok\nbash\n");
    // the tools agents' commands expect, when this host has them
    for (const tool of ["git", "curl", "pip3"].filter((t) => built.plan?.programs[t])) {
      expect(runHardened(TAG, [tool, "--version"]).status, tool).toBe(0);
    }

    const again = await buildImageFromHost({ tag: TAG });
    expect(again).toMatchObject({ reused: true, id: inspect.Id });
  }, 240_000);

  it("Dockerfile: a base image that is absent and cannot be pulled fails quickly, naming it and pointing at --from-host", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "dfimg-df-"));
    dirs.push(dir);
    const dockerfile = path.join(dir, "Dockerfile");
    writeFileSync(dockerfile, "FROM deerflow-test-absent-base:nope\nRUN true\n");
    const started = Date.now();
    let caught: unknown;
    try {
      await buildImageFromDockerfile({ tag: "deerflow-test-never-built:1", dockerfile });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SandboxError);
    expect((caught as SandboxError).code).toBe("sandbox_image_base_missing");
    expect((caught as Error).message).toContain("deerflow-test-absent-base:nope");
    expect((caught as Error).message).toContain("deerflow sandbox image build --from-host");
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(spawnSync("docker", ["image", "inspect", "deerflow-test-never-built:1"], { stdio: "ignore" }).status).not.toBe(0);
  }, 90_000);

  const baseAbsent = DOCKER && spawnSync("docker", ["image", "inspect", "debian:bookworm-slim"], { stdio: "ignore" }).status !== 0;
  it.skipIf(!baseAbsent)("the repository's Dockerfile names its Debian base when it is absent here", async () => {
    await expect(buildImageFromDockerfile({ tag: "deerflow-test-never-built:2", dockerfile: SANDBOX_DOCKERFILE })).rejects.toMatchObject({
      code: "sandbox_image_base_missing",
      message: expect.stringContaining("debian:bookworm-slim"),
    });
  }, 90_000);
});
