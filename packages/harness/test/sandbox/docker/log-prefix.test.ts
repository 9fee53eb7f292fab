import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { DeerFlowRuntime } from "../../../src/deerflow-runtime";
import { DockerSandboxProvider } from "../../../src/sandbox/docker";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled();

function project(sandbox: string[]): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "dfdock-log-"));
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", ...sandbox.map((l) => `  ${l}`), ""].join("\n"));
  return { dir, file };
}

/** A port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("sandbox log lines through the runtime's log carry one [deerflow] prefix", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!enabled)("Docker provider: the warm pool's 'image missing' line (real Docker)", async () => {
    const { dir, file } = project(["use: docker", `image: deerflow-test-absent:${randomBytes(4).toString("hex")}`, "replicas: 1", `container_prefix: dftest-${randomBytes(3).toString("hex")}`]);
    dirs.push(dir);
    const logs: string[] = [];
    const rt = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "d"), log: (m) => logs.push(m) });
    try {
      await (rt.sandboxProvider as DockerSandboxProvider).settled();
      const line = logs.find((l) => l.includes("warm pool disabled"));
      expect(line, logs.join("\n")).toMatch(/^\[deerflow\] sandbox: warm pool disabled until a sandbox container can be created: /);
      expect(logs.filter((l) => l.includes("[deerflow] [deerflow]"))).toEqual([]);
    } finally {
      await rt.close();
    }
  });

  it("remote provider: a provisioner that is down when a thread is deleted", async () => {
    const { dir, file } = project([`provisioner_url: http://127.0.0.1:${await deadPort()}`, "provisioner_api_key: k0123456789abcdef"]);
    dirs.push(dir);
    const logs: string[] = [];
    const rt = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "d"), log: (m) => logs.push(m) });
    try {
      await rt.deleteThread("t-down", "default");
      const sandboxLines = logs.filter((l) => l.includes("sandbox"));
      expect(sandboxLines).toEqual([expect.stringMatching(/^\[deerflow\] sandbox: could not delete the sandbox of deleted thread t-down through the provisioner: .*unreachable/)]);
      expect(logs.filter((l) => l.includes("[deerflow] [deerflow]"))).toEqual([]);
    } finally {
      await rt.close();
    }
  });
});
