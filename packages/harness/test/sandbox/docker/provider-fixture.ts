import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { parseSandboxConfig } from "../../../src/sandbox";
import type { SandboxConfigInput } from "../../../src/sandbox";
import { DockerSandboxProvider, LABELS } from "../../../src/sandbox/docker";
import type { DockerProviderOptions } from "../../../src/sandbox/docker";
import { ensureTestImage, removeLabelled } from "./test-image";

/** A provider over a fresh data dir and skills dir, with a unique container prefix; `cleanup` removes everything. */
export interface DockerFixture {
  provider: DockerSandboxProvider;
  baseDir: string;
  skillsDir: string;
  prefix: string;
  cleanup(): Promise<void>;
}

/** Build a Docker provider for a test (small limits, no pool unless asked). */
export function dockerFixture(sandbox: SandboxConfigInput = {}, options: Partial<DockerProviderOptions> = {}): DockerFixture {
  const image = ensureTestImage();
  const baseDir = mkdtempSync(path.join(os.tmpdir(), "dfdock-"));
  chmodSync(baseDir, 0o711);
  const skillsDir = path.join(baseDir, "skills");
  mkdirSync(path.join(skillsDir, "public", "demo"), { recursive: true });
  writeFileSync(path.join(skillsDir, "public", "demo", "SKILL.md"), "# demo skill\n");
  const prefix = `dftest-${randomBytes(3).toString("hex")}`;
  const config = parseSandboxConfig({
    use: "docker",
    image,
    replicas: 0,
    container_prefix: prefix,
    ...sandbox,
    limits: { memory_bytes: 256 * 1024 * 1024, processes: 128, tmp_size_bytes: 32 * 1024 * 1024, ...(sandbox.limits ?? {}) },
  });
  const provider = new DockerSandboxProvider(config, { baseDir, skillsPath: skillsDir, log: () => {}, ...options });
  return {
    provider,
    baseDir,
    skillsDir,
    prefix,
    cleanup: async () => {
      await provider.shutdown().catch(() => undefined);
      removeLabelled(LABELS.instance, provider.owner.instanceId);
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
