import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEngine, DockerError, toDockerError } from "../../../src/sandbox/docker";
import { dockerTestsEnabled, ensureTestImage, listLabelled, removeLabelled } from "./test-image";

const enabled = dockerTestsEnabled();
const LABEL = "deerflow.test.engine";
const run = randomBytes(4).toString("hex");

describe("toDockerError", () => {
  it("maps socket errnos and API statuses to stable codes, masking credentials", () => {
    expect(toDockerError({ code: "ENOENT" }, "ping", "unix:///nope.sock").code).toBe("docker_unreachable");
    expect(toDockerError({ code: "ECONNREFUSED" }, "ping", "tcp://u:secret@h:2375").message).not.toContain("secret");
    expect(toDockerError({ code: "EACCES" }, "ping", "unix:///var/run/docker.sock").code).toBe("docker_permission_denied");
    expect(toDockerError({ statusCode: 409, json: { message: "name in use" } }, "create", "x").code).toBe("docker_conflict");
    expect(toDockerError({ statusCode: 500, json: { message: "boom" } }, "create", "x").message).toContain("boom");
  });
});

describe("DockerEngine against an unreachable endpoint", () => {
  it("reports docker_unreachable naming the endpoint", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "dfeng-"));
    try {
      const engine = new DockerEngine({ host: `unix://${dir}/missing.sock` });
      const err = await engine.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DockerError);
      expect((err as DockerError).code).toBe("docker_unreachable");
      expect((err as DockerError).message).toContain(`${dir}/missing.sock`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!enabled)("DockerEngine (real daemon)", () => {
  const engine = new DockerEngine();
  let image = "";
  let id = "";
  const user = "65534:65534";

  beforeAll(async () => {
    image = ensureTestImage();
    id = await engine.createContainer({
      Image: image,
      name: `deerflow-test-engine-${run}`,
      Cmd: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"],
      User: user,
      Labels: { [LABEL]: run },
      HostConfig: { NetworkMode: "none", ReadonlyRootfs: true, CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"], Tmpfs: { "/tmp": "rw,size=16m,mode=1777" } },
    });
    await engine.startContainer(id);
  });

  afterAll(() => {
    removeLabelled(LABEL, run);
  });

  it("pings and names a missing image by its reference", async () => {
    expect((await engine.ping()).apiVersion).toMatch(/^\d+\.\d+$/);
    expect(await engine.inspectImage(image)).not.toBeNull();
    const err = await engine.requireImage(`deerflow-missing-${run}:1`).catch((e: unknown) => e);
    expect((err as DockerError).code).toBe("docker_image_missing");
    expect((err as DockerError).message).toContain(`deerflow-missing-${run}:1`);
  });

  it("runs a command: exit code and demuxed stdout/stderr", async () => {
    const res = await engine.exec(id, "echo out; echo err >&2; id -u; exit 3", { user, timeoutMs: 10_000, maxOutputBytes: 4096 });
    expect(res).toMatchObject({ stdout: "out\n65534\n", stderr: "err\n", exitCode: 3, timedOut: false, truncated: false });
  });

  it("caps output keeping head and tail", async () => {
    const res = await engine.exec(id, "printf 'HEAD'; yes x | head -c 200000; printf 'TAIL'", { user, timeoutMs: 10_000, maxOutputBytes: 2048 });
    expect(res.truncated).toBe(true);
    expect(res.stdout.startsWith("HEAD")).toBe(true);
    expect(res.stdout.endsWith("TAIL")).toBe(true);
    expect(res.stdout.length).toBeLessThan(2200);
  });

  it("kills the whole process group on timeout", async () => {
    const res = await engine.exec(id, "sleep 300 & sleep 301; echo never", { user, timeoutMs: 300, maxOutputBytes: 4096 });
    expect(res.timedOut).toBe(true);
    expect(res.exitCode).toBe(137);
    expect(res.stdout).not.toContain("never");
    const ps = await engine.exec(id, "ps -eo args", { user, timeoutMs: 10_000, maxOutputBytes: 65536 });
    expect(ps.stdout).not.toMatch(/sleep 30[01]/);
  });

  it("kills on abort", async () => {
    const ac = new AbortController();
    const pending = engine.exec(id, "echo started; sleep 302", { user, timeoutMs: 60_000, maxOutputBytes: 4096, signal: ac.signal });
    // Abort once the command has demonstrably started (its pid line and output are in).
    const probe = await engine.exec(id, "for i in $(seq 1 100); do ps -eo args | grep -q '^sleep 302' && exit 0; sleep 0.1; done; exit 1", { user, timeoutMs: 20_000, maxOutputBytes: 4096 });
    expect(probe.exitCode).toBe(0);
    ac.abort();
    const res = await pending;
    expect(res).toMatchObject({ aborted: true, exitCode: 137, timedOut: false });
    const ps = await engine.exec(id, "ps -eo args", { user, timeoutMs: 10_000, maxOutputBytes: 65536 });
    expect(ps.stdout).not.toContain("sleep 302");
  });

  it("ends background children with the command instead of waiting for their pipes", async () => {
    const started = Date.now();
    const res = await engine.exec(id, "sleep 303 & echo bg", { user, timeoutMs: 20_000, maxOutputBytes: 4096 });
    expect(res).toMatchObject({ stdout: "bg\n", exitCode: 0, timedOut: false });
    expect(Date.now() - started).toBeLessThan(10_000);
    const ps = await engine.exec(id, "ps -eo args", { user, timeoutMs: 10_000, maxOutputBytes: 65536 });
    expect(ps.stdout).not.toContain("sleep 303");
  });

  it("lists by label, removes, and reports a missing container", async () => {
    const listed = await engine.listContainers({ [LABEL]: run });
    expect(listed.map((c) => c.id)).toContain(id);
    const tmp = await engine.createContainer({ Image: image, name: `deerflow-test-engine-${run}-b`, Cmd: ["/bin/sh", "-c", "true"], Labels: { [LABEL]: run } });
    expect(await engine.removeContainer(tmp)).toBe(true);
    expect(await engine.removeContainer(tmp)).toBe(false);
    expect(await engine.inspectContainer(tmp)).toBeNull();
    const err = await engine.exec(tmp, "true", { timeoutMs: 5000, maxOutputBytes: 1024 }).catch((e: unknown) => e);
    expect((err as DockerError).code).toBe("docker_container_missing");
    expect(listLabelled(LABEL, run)).toEqual([id.slice(0, 12)]);
  });
});
