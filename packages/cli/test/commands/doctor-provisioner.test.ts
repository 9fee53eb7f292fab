import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSandboxConfig } from "@deerflow-ts/harness/sandbox";
import { DockerBackend, startProvisioner } from "@deerflow-ts/server/provisioner";
import type { RunningProvisioner } from "@deerflow-ts/server/provisioner";
import { dockerTestsEnabled, ensureTestImage, removeLabelled } from "../../../harness/test/sandbox/docker/test-image";
import { provisionerFindings, showUrl } from "../../src/commands/doctor-provisioner";
import { cleanEnv, runCli, tempDir } from "../helpers";

/** A port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const sandbox = (keys: Record<string, unknown>) => parseSandboxConfig({ use: "deerflow.community.aio_sandbox:AioSandboxProvider", ...keys });

describe("doctor: sandbox.provisioner_url without a provisioner", () => {
  it("names the URL nothing answers at, with a Fix line", async () => {
    const port = await deadPort();
    const f = await provisionerFindings(sandbox({ provisioner_url: `http://127.0.0.1:${port}`, provisioner_api_key: "k".repeat(20) }), {}, 5000);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ check: "provisioner", level: "error", message: expect.stringContaining(`no provisioner answers at http://127.0.0.1:${port}`) });
    expect(f[0]!.message).toContain("unreachable");
    expect(f[0]!.fix).toMatch(/deerflow provisioner/);
  });

  it("masks credentials put in the URL and names the key an unset $VAR belongs to", async () => {
    const f = await provisionerFindings(sandbox({ provisioner_url: "http://admin:hunter22@127.0.0.1:1" }), {}, 5000);
    expect(f[0]).toMatchObject({ level: "error", message: expect.stringContaining("http://***:***@127.0.0.1:1") });
    expect(f[0]!.message).toContain("must not contain credentials");
    expect(f[0]!.message).not.toContain("hunter22");
    expect(f[0]!.message).not.toContain("admin");
    const unset = await provisionerFindings(sandbox({ provisioner_url: "http://127.0.0.1:1", provisioner_api_key: "$DF_NOT_SET_ANYWHERE" }), {}, 5000);
    expect(unset[0]).toMatchObject({ level: "error", message: expect.stringContaining("sandbox.provisioner_api_key refers to $DF_NOT_SET_ANYWHERE") });
    expect(unset[0]!.fix).toContain("sandbox.provisioner_api_key");
    expect(showUrl("http://u:p@h:8002/?token=abc")).toBe("http://***:***@h:8002/?token=***");
  });

  it("is silent when a host tier is named in sandbox.use", async () => {
    expect(await provisionerFindings(parseSandboxConfig({ use: "bwrap", provisioner_url: "http://127.0.0.1:1" }), {}, 1000)).toEqual([]);
    expect(await provisionerFindings(parseSandboxConfig({ use: "docker" }), {}, 1000)).toEqual([]);
  });
});

const enabled = dockerTestsEnabled();
const LABEL = "deerflow.test.provisioner";

describe.skipIf(!enabled)("doctor: a real deerflow provisioner (Docker backend)", () => {
  const run = randomBytes(4).toString("hex");
  const apiKey = randomBytes(24).toString("hex");
  let provisioner: RunningProvisioner;

  beforeAll(async () => {
    const image = ensureTestImage();
    const backend = new DockerBackend({ config: parseSandboxConfig({}), image, dataDir: tempDir("df-doc-prov-"), containerPrefix: `dfdoc-${run}`, labels: { [LABEL]: run } });
    provisioner = await startProvisioner({ backend, apiKey, host: "127.0.0.1", port: 0 });
  }, 120_000);
  afterAll(async () => {
    await provisioner?.close();
    removeLabelled(LABEL, run);
  });

  it("accepts the right key (ok), refuses a wrong or a missing one naming the URL and the key to set", async () => {
    const ok = await provisionerFindings(sandbox({ provisioner_url: provisioner.url, provisioner_api_key: "$PROV_KEY" }), { PROV_KEY: apiKey }, 10_000);
    expect(ok).toEqual([{ check: "provisioner", level: "ok", message: expect.stringMatching(new RegExp(`^the provisioner at ${provisioner.url} answers and accepts the API key \\(\\d+ sandbox(es)? listed\\)$`)) }]);

    const wrong = await provisionerFindings(sandbox({ provisioner_url: provisioner.url, provisioner_api_key: "wrong-key-0123456789" }), {}, 10_000);
    expect(wrong).toEqual([
      {
        check: "provisioner",
        level: "error",
        message: `the provisioner at ${provisioner.url} refused the API key in sandbox.provisioner_api_key (sent as X-API-Key)`,
        fix: expect.stringContaining("PROVISIONER_API_KEY"),
      },
    ]);
    expect(JSON.stringify(wrong)).not.toContain("wrong-key-0123456789");
    const missing = await provisionerFindings(sandbox({ provisioner_url: provisioner.url }), {}, 10_000);
    expect(missing[0]!.message).toBe(`the provisioner at ${provisioner.url} requires an API key, and sandbox.provisioner_api_key is not set`);

    // The provisioner's /health is not its management API: named as not a provisioner.
    const notProv = await provisionerFindings(sandbox({ provisioner_url: `${provisioner.url}/health`, provisioner_api_key: apiKey }), {}, 10_000);
    expect(notProv[0]).toMatchObject({ level: "error", message: expect.stringContaining(`the service at ${provisioner.url}/health does not answer as a sandbox provisioner`) });
  });

  it("deerflow doctor exits 0 with the provisioner reachable and the key accepted, 1 with a wrong key", async () => {
    const cwd = tempDir("df-doc-prov-cli-");
    const write = (key: string) =>
      writeFileSync(
        path.join(cwd, "config.yaml"),
        [
          "models:",
          "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }",
          "sandbox:",
          "  use: deerflow.community.aio_sandbox:AioSandboxProvider",
          `  provisioner_url: ${provisioner.url}`,
          `  provisioner_api_key: ${key}`,
          "",
        ].join("\n"),
      );
    write("$PROVISIONER_API_KEY");
    const good = await runCli(["doctor", "--skip-model", "--data-dir", path.join(cwd, "data")], { cwd, env: cleanEnv({ PROVISIONER_API_KEY: apiKey }), timeoutMs: 90_000 });
    expect(good.stdout, good.stderr).toContain(`✓ provisioner: the provisioner at ${provisioner.url} answers and accepts the API key`);
    expect(good.stdout).toContain("No problems found");
    expect(good.stdout).not.toContain("bubblewrap");
    expect(good.code).toBe(0);

    write("not-the-key-0123456789");
    const bad = await runCli(["doctor", "--skip-model", "--data-dir", path.join(cwd, "data")], { cwd, env: cleanEnv(), timeoutMs: 90_000 });
    expect(bad.stdout).toContain(`provisioner: the provisioner at ${provisioner.url} refused the API key`);
    expect(bad.stdout).toMatch(/fix: Set sandbox\.provisioner_api_key/);
    expect(bad.code).toBe(1);
  });
});
