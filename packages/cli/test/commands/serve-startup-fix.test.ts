/**
 * Every way `deerflow serve` can fail to start prints what went wrong and a
 * `Fix:` line saying what to change: the port taken, a bad config, an
 * unreachable PostgreSQL or Redis, sign-in on without a secret, a data dir it
 * cannot create. Real `deerflow serve` processes, real sockets on 127.0.0.1.
 */
import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@deerflow-ts/harness/testing";
import { describeError, FixedError, UsageError } from "../../src/common";
import { withStartupFix } from "../../src/commands/serve-errors";
import { cleanEnv, runCli, tempDir } from "../helpers";

/** A project dir with this config.yaml (and a file named `afile`, for a data dir that cannot be created). */
function project(lines: string[]): string {
  const dir = tempDir("df-serve-fix-");
  writeFileSync(path.join(dir, "config.yaml"), ["config_version: 34", "sandbox:", "  use: local", ...lines, ""].join("\n"));
  writeFileSync(path.join(dir, "afile"), "not a directory\n");
  return dir;
}

/** `deerflow serve` in `dir` that must fail: its exit code, the `Error:` text and the `Fix:` line. */
async function failedServe(dir: string, args: string[]): Promise<{ code: number | null; error: string; fix: string; stderr: string }> {
  const r = await runCli(["serve", "--no-web-build", ...args], { cwd: dir, env: cleanEnv({ DEER_FLOW_SKIP_WEB_BUILD: "1" }), timeoutMs: 90_000 });
  const lines = r.stderr.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Error: "));
  const fix = lines.slice(at + 1).find((l) => l.startsWith("Fix: ")) ?? "";
  return { code: r.code, error: at >= 0 ? lines.slice(at).join("\n") : "", fix, stderr: r.stderr };
}

describe("deerflow serve start-up failures all say how to fix them", { timeout: 240_000 }, () => {
  let taken: net.Server;
  let takenPort: number;
  beforeAll(async () => {
    taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    takenPort = (taken.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => taken?.close(r));
  });

  it("port in use, bad config, unreachable PostgreSQL and Redis, auth without a secret, an unusable data dir", async () => {
    const [pgPort, redisPort] = [await freePort(), await freePort()];
    const cases: Array<{ name: string; dir: string; args: string[]; error: RegExp; fix: string }> = [
      { name: "port in use", dir: project([]), args: ["--port", String(takenPort)], error: /EADDRINUSE/, fix: `Fix: Port ${takenPort} on 127.0.0.1 is already in use` },
      { name: "bad config", dir: project(["server:", "  allowed_hosts: 5"]), args: ["--port", "0"], error: /server\.allowed_hosts/, fix: "Fix: Fix server.allowed_hosts in " },
      {
        name: "PostgreSQL unreachable",
        dir: project(["database:", "  backend: postgres", `  postgres_url: postgres://deer:s3cret-pw@127.0.0.1:${pgPort}/deerflow`]),
        args: ["--port", "0"],
        error: /Cannot connect to PostgreSQL at postgres:\/\/deer:\*\*\*@127\.0\.0\.1/,
        fix: "Fix: Check that PostgreSQL runs and accepts connections at that address",
      },
      {
        name: "Redis unreachable",
        dir: project(["stream_bridge:", "  type: redis", `  redis_url: redis://127.0.0.1:${redisPort}/0`]),
        args: ["--port", "0"],
        error: /Cannot connect to Redis at redis:\/\/127\.0\.0\.1/,
        fix: "Fix: Check that Redis runs and accepts connections there",
      },
      { name: "auth without a secret", dir: project(["auth:", "  enabled: true"]), args: ["--port", "0"], error: /auth\.jwt_secret is not set/, fix: "Fix: Run `deerflow init --auth`" },
      { name: "data dir unusable", dir: project([]), args: ["--port", "0", "--data-dir", "afile/data"], error: /ENOTDIR/, fix: "Fix: The data dir " },
    ];
    // two at a time: each is a whole CLI process
    const results: Array<Awaited<ReturnType<typeof failedServe>>> = [];
    for (let i = 0; i < cases.length; i += 2) results.push(...(await Promise.all(cases.slice(i, i + 2).map((c) => failedServe(c.dir, c.args)))));
    cases.forEach((c, i) => {
      const r = results[i];
      expect({ name: c.name, code: r.code }, r.stderr).toEqual({ name: c.name, code: 1 });
      expect(r.error, `${c.name}: ${r.stderr}`).toMatch(c.error);
      expect(r.fix, `${c.name}: ${r.stderr}`).toContain(c.fix);
    });
    expect(results[2].stderr).not.toContain("s3cret-pw");
    expect(results[5].fix).toContain(`--data-dir PATH`);
  });

  it("an error serve has no specific fix for points to deerflow doctor; usage errors and known fixes pass through", () => {
    const at = { host: "127.0.0.1", port: 2026, dataDir: "/srv/deerflow/.deer-flow" };
    const unknown = withStartupFix(new Error("something odd"), at);
    expect(describeError(unknown)).toBe("something odd\nFix: Run `deerflow doctor`: it checks the config, the env vars, the data dir, PostgreSQL and Redis, and says what to change.");
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/deerflow/.deer-flow/threads'"), { code: "EACCES", syscall: "mkdir", path: "/srv/deerflow/.deer-flow/threads" });
    expect((withStartupFix(denied, at) as FixedError).fix).toContain("The data dir /srv/deerflow/.deer-flow cannot be used (permission denied)");
    const privileged = Object.assign(new Error("listen EACCES: permission denied 127.0.0.1:80"), { code: "EACCES", syscall: "listen" });
    expect((withStartupFix(privileged, { ...at, port: 80 }) as FixedError).fix).toContain("ports below 1024 need privileges");
    const usage = new UsageError("--port must be an integer", "serve");
    expect(withStartupFix(usage, at)).toBe(usage);
  });
});
