import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerTestsEnabled, ensureNodeBaseImage } from "./base-image";

/**
 * deploy/Dockerfile for real: staged with deploy/stage-app.mjs, built from a base made of this
 * host's node (no registry is reachable here), run as the image's own non-root user. The gateway
 * must answer /health and serve the web UI, the image's HEALTHCHECK must report healthy, and
 * `docker stop` must end it cleanly. Nothing is left behind but the cached base image.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const enabled = dockerTestsEnabled();
const run = `${process.pid}-${Date.now().toString(36)}`;
const tag = `deerflow-test-gateway:${run}`;
const context = path.join(REPO, "deploy", ".build", `test-${run}`);
const removeImages: string[] = [];
const containers: string[] = [];

function docker(args: string[], timeout = 120_000): string {
  const res = spawnSync("docker", args, { encoding: "utf8", timeout, maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`docker ${args.join(" ")} failed (${res.status ?? res.signal}): ${res.stderr || res.stdout}`);
  return res.stdout.trim();
}

/** Resolve once a line of the container's output contains `text` (the event itself, no polling). */
function waitForLog(id: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["logs", "-f", id], { stdio: ["ignore", "pipe", "pipe"] });
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) {
        child.kill();
        resolve(seen);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", () => reject(new Error(`container ${id} ended its output before printing '${text}':\n${seen}`)));
  });
}

/** Resolve with the first health status Docker reports for the container (`docker events`). */
function nextHealthStatus(id: string, since: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["events", "--since", since, "--filter", `container=${id}`, "--filter", "event=health_status", "--format", "{{.Status}}"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("health_status"));
      if (line) {
        child.kill();
        resolve(line.replace(/^health_status:\s*/, "").trim());
      }
    });
    child.on("exit", (code) => reject(new Error(`docker events ended (${code}) before a health status: ${out}`)));
  });
}

describe.skipIf(!enabled)("deploy/Dockerfile", () => {
  let buildSeconds = 0;
  beforeAll(async () => {
    const base = ensureNodeBaseImage();
    mkdirSync(path.dirname(context), { recursive: true });
    const stage = spawnSync(process.execPath, [path.join(REPO, "deploy/stage-app.mjs"), context], { encoding: "utf8" });
    if (stage.status !== 0) throw new Error(`deploy/stage-app.mjs failed: ${stage.stderr}`);
    const started = Date.now();
    // the classic builder (what this daemon has without buildx) prints each step's image id, which
    // names the `app` stage's last image: removed afterwards with its untagged parents
    const build = spawnSync("docker", ["build", "--force-rm", "-f", path.join(REPO, "deploy/Dockerfile"), "--build-arg", `BASE_IMAGE=${base}`, "-t", tag, context], {
      encoding: "utf8",
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
      timeout: 900_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    buildSeconds = (Date.now() - started) / 1000;
    const lines = build.stdout.split("\n");
    const secondFrom = lines.findIndex((l, i) => /^Step \d+\/\d+ : FROM /.test(l) && lines.slice(0, i).some((p) => /^Step \d+\/\d+ : FROM /.test(p)));
    const appStage = lines.slice(0, secondFrom).reverse().find((l) => l.startsWith(" ---> ") && !l.includes("Running in"));
    if (appStage) removeImages.push(appStage.replace(" ---> ", "").trim());
    removeImages.push(tag);
    if (build.status !== 0) throw new Error(`docker build failed:\n${build.stdout.slice(-4000)}\n${build.stderr.slice(-4000)}`);
    console.log(`[deploy image] built ${tag} in ${buildSeconds.toFixed(1)} s, ${(Number(docker(["image", "inspect", "-f", "{{.Size}}", tag])) / 1e6).toFixed(0)} MB`);
  }, 960_000);

  afterAll(() => {
    if (containers.length) spawnSync("docker", ["rm", "-f", ...containers], { stdio: "ignore" });
    for (const image of removeImages) spawnSync("docker", ["rmi", "-f", image], { stdio: "ignore" });
    rmSync(context, { recursive: true, force: true });
  });

  it("declares a non-root user, port 2026 and a HEALTHCHECK on /health", () => {
    const config = JSON.parse(docker(["image", "inspect", "-f", "{{json .Config}}", tag])) as { User: string; ExposedPorts: Record<string, unknown>; Healthcheck: { Test: string[] } };
    expect(config.User).toBe("10001:10001");
    expect(Object.keys(config.ExposedPorts)).toEqual(["2026/tcp"]);
    expect(config.Healthcheck.Test.join(" ")).toContain("/health");
  });

  it("runs as that user, serves /health and the web UI, turns healthy and stops cleanly", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const startedAt = Date.now();
    // the image's own HEALTHCHECK command, probed every second instead of every 10 s
    const container = docker(["run", "-d", "--health-interval", "1s", "-p", "127.0.0.1::2026", tag, "serve", "--demo", "--allow-unauthenticated"]);
    containers.push(container);
    const health = nextHealthStatus(container, since);
    await waitForLog(container, "DeerFlow is running at");
    const port = Number(docker(["port", container, "2026/tcp"]).split("\n")[0].split(":").pop());

    const h = await fetch(`http://127.0.0.1:${port}/health`);
    expect(h.status).toBe(200);
    const ui = await fetch(`http://127.0.0.1:${port}/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<title>DeerFlow<\/title>/);

    expect(await health).toBe("healthy");
    console.log(`[deploy image] container start to healthy: ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);

    expect(docker(["exec", container, "id", "-u"])).toBe("10001");
    // the application is read-only to that user; only /data is its own
    const write = spawnSync("docker", ["exec", container, "node", "-e", "require('fs').writeFileSync('/app/package.json','x')"], { encoding: "utf8" });
    expect(write.status).not.toBe(0);
    expect(write.stderr).toMatch(/EACCES/);
    expect(docker(["exec", container, "node", "-e", "require('fs').writeFileSync('/data/probe','x');console.log('ok')"])).toBe("ok");

    docker(["stop", "-t", "20", container]);
    const state = JSON.parse(docker(["inspect", "-f", "{{json .State}}", container])) as { ExitCode: number; OOMKilled: boolean };
    expect(state.ExitCode).toBe(0); // SIGTERM handled by serve, not a SIGKILL after the timeout (137)
  }, 180_000);

  const pgUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
  const redisUrl = process.env.DEERFLOW_TEST_REDIS_URL;
  it.skipIf(!pgUrl || !redisUrl)("starts on deploy/compose/config.yaml: PostgreSQL (migrated), the Redis bridge and sign-in on", async () => {
    const db = await freshPostgresDatabase(pgUrl as string, "deploy");
    try {
      const port = await freePort();
      // the test's PostgreSQL and Redis listen on this machine's loopback: the host network reaches them
      const container = docker([
        "run", "-d", "--network", "host",
        "-v", `${path.join(REPO, "deploy/compose/config.yaml")}:/etc/deerflow/config.yaml:ro`,
        "-e", "DEER_FLOW_CONFIG_PATH=/etc/deerflow/config.yaml", "-e", "DEER_FLOW_ENV=production",
        "-e", "HOST=127.0.0.1", "-e", `PORT=${port}`,
        "-e", `DATABASE_URL=${db.url}`, "-e", `DEER_FLOW_STREAM_BRIDGE_REDIS_URL=${redisUrl}`,
        "-e", `DEER_FLOW_JWT_SECRET=${"k".repeat(40)}`, "-e", "DEER_FLOW_MODEL=gpt-4o-mini", "-e", "OPENAI_API_KEY=sk-unused",
        tag,
      ]);
      containers.push(container);
      const out = await waitForLog(container, "Sign-in:");
      expect(out).toContain("Sign-in: required");
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      // sign-in on: the API wants an account
      expect((await fetch(`http://127.0.0.1:${port}/api/models`)).status).toBe(401);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const tables = await client.query<{ n: string }>("SELECT count(*) AS n FROM information_schema.tables WHERE table_name LIKE 'deerflow_%'");
        expect(Number(tables.rows[0].n)).toBeGreaterThan(0);
      } finally {
        await client.end();
      }
      docker(["stop", "-t", "20", container]);
      expect(docker(["inspect", "-f", "{{.State.ExitCode}}", container])).toBe("0");
    } finally {
      await db.drop();
    }
  }, 180_000);
});
