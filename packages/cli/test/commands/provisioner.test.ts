import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dockerTestsEnabled, ensureTestImage } from "../../../harness/test/sandbox/docker/test-image";
import { cleanEnv, runCli, startCli, stopChild, tempDir } from "../helpers";

const enabled = dockerTestsEnabled();
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("deerflow provisioner", () => {
  it("refuses to start without an API key, naming the variable", async () => {
    const cwd = tempDir("df-prov-");
    dirs.push(cwd);
    const res = await runCli(["provisioner", "--port", "0"], { cwd, env: cleanEnv({ PROVISIONER_API_KEY: undefined }) });
    expect(res.code).not.toBe(0);
    expect(res.stderr + res.stdout).toMatch(/API key of at least 16 characters \(PROVISIONER_API_KEY\)/);
  });

  it.skipIf(!enabled)("serves DeerFlow's provisioner API over the Docker backend and stops on SIGTERM", async () => {
    const cwd = tempDir("df-prov-");
    dirs.push(cwd);
    const prefix = `dfprovcli-${randomBytes(3).toString("hex")}`;
    writeFileSync(path.join(cwd, "config.yaml"), `sandbox:\n  container_prefix: ${prefix}\n  limits:\n    memory_bytes: 268435456\n`);
    const key = randomBytes(20).toString("hex");
    const { child, match } = await startCli(["provisioner", "--port", "0", "--image", ensureTestImage(), "--data-dir", path.join(cwd, "data")], {
      cwd,
      env: cleanEnv({ PROVISIONER_API_KEY: key }),
      ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    });
    try {
      const url = match[1];
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: "ok", backend: "docker" });
      const created = await fetch(`${url}/api/sandboxes`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-API-Key": key },
        body: JSON.stringify({ sandbox_id: "cli-one", thread_id: "t1", user_id: "default" }),
      });
      expect(created.status).toBe(200);
      const info = (await created.json()) as { sandbox_url: string; sandbox_token: string; status: string };
      expect(info).toMatchObject({ sandbox_url: `${url}/sandboxes/cli-one`, status: "Running" });
      const run = await fetch(`${info.sandbox_url}/v1/exec`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Sandbox-Token": info.sandbox_token },
        body: JSON.stringify({ command: "echo from-cli" }),
      });
      expect(await run.json()).toMatchObject({ stdout: "from-cli\n", exit_code: 0 });
      expect(execFileSync("docker", ["ps", "-a", "--format", "{{.Names}}"], { encoding: "utf8" })).toContain(`${prefix}-cli-one`);
      expect((await fetch(`${url}/api/sandboxes/cli-one`, { method: "DELETE", headers: { "X-API-Key": key } })).status).toBe(200);
      expect(execFileSync("docker", ["ps", "-a", "--format", "{{.Names}}"], { encoding: "utf8" })).not.toContain(`${prefix}-cli-one`);
    } finally {
      await stopChild(child);
      const left = execFileSync("docker", ["ps", "-aq", "--filter", `name=${prefix}-`], { encoding: "utf8" }).split("\n").filter(Boolean);
      if (left.length) execFileSync("docker", ["rm", "-f", ...left], { stdio: "ignore" });
    }
    expect(child.exitCode ?? child.signalCode).not.toBeNull();
  });
});
