import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { dockerAvailable, runHardened } from "../../../harness/test/sandbox/image/helpers";
import { cleanEnv, runCli, tempDir } from "../helpers";

describe("deerflow sandbox: usage", () => {
  it("prints its help without a subcommand (exit 2) and with --help (exit 0)", async () => {
    const cwd = tempDir();
    const bare = await runCli(["sandbox"], { cwd });
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain("Usage: deerflow sandbox image build");
    const help = await runCli(["sandbox", "--help"], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--from-host");
  });

  it("refuses an unknown subcommand and a malformed --build-arg", async () => {
    const cwd = tempDir();
    const sub = await runCli(["sandbox", "image", "pull"], { cwd });
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("unknown subcommand 'image pull'; the one there is: sandbox image build");
    const arg = await runCli(["sandbox", "image", "build", "--build-arg", "NOEQUALS"], { cwd });
    expect(arg.code).toBe(2);
    expect(arg.stderr).toContain("--build-arg expects KEY=VALUE, got 'NOEQUALS'");
  });

  it("says where no daemon answers and how to check (exit 1)", async () => {
    const cwd = tempDir();
    const dead = path.join(cwd, "none.sock");
    const r = await runCli(["sandbox", "image", "build", "--from-host"], { cwd, env: cleanEnv({ DOCKER_HOST: `unix://${dead}` }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`[docker_unreachable]: Docker daemon is not reachable at unix://${dead}`);
    expect(r.stderr).toContain("deerflow doctor");
  });
});

const DOCKER = dockerAvailable("sandbox image CLI tests");

describe.skipIf(!DOCKER)("deerflow sandbox image build (real Docker)", () => {
  it("--from-host builds (or finds up to date) an image that runs python3 as uid 1000 on a read-only root", async () => {
    const cwd = tempDir();
    const tag = "deerflow-test-host-image:latest";
    const r = await runCli(["sandbox", "image", "build", "--from-host", "--tag", tag], { cwd, env: cleanEnv({ DOCKER_HOST: undefined }), timeoutMs: 240_000 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Building ${tag} from this host's programs (no registry needed)`);
    expect(r.stdout).toMatch(new RegExp(`(Built ${tag} \\(sha256:[0-9a-f]{12}, \\d+ MiB\\)|${tag} is up to date)`));
    expect(runHardened(tag, ["python3", "-c", "import os; print(os.getuid())"])).toMatchObject({ status: 0, stdout: "1000\n" });
  }, 300_000);

  const baseAbsent = DOCKER && spawnSync("docker", ["image", "inspect", "debian:bookworm-slim"], { stdio: "ignore" }).status !== 0;
  it.skipIf(!baseAbsent)("the Dockerfile build names the absent base image and suggests --from-host (exit 1)", async () => {
    const cwd = tempDir();
    const r = await runCli(["sandbox", "image", "build", "--tag", "deerflow-test-never-built:3"], { cwd, env: cleanEnv({ DOCKER_HOST: undefined }), timeoutMs: 90_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("docker/sandbox/Dockerfile");
    expect(r.stderr).toContain("[sandbox_image_base_missing]");
    expect(r.stderr).toContain("its base image debian:bookworm-slim is not present locally and could not be pulled");
    expect(r.stderr).toContain("deerflow sandbox image build --from-host");
  }, 120_000);
});
