import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadAppConfig, silentConfigLogger } from "../../packages/harness/src/config";

/**
 * deploy/compose: the compose file as docker-compose reads it (`docker-compose config`, which checks
 * it against its schema and fills in the variables), the gateway's config.yaml as the gateway loads
 * it, and nginx.conf as nginx parses it (`nginx -t`). docker-compose and nginx come from Debian
 * (.ci/run installs them); without them these tests skip with a notice, except in CI
 * (DEERFLOW_REQUIRE_DOCKER=1), where their absence fails.
 */
const DIR = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.."), "deploy/compose");
const COMPOSE = path.join(DIR, "docker-compose.yml");
const ENV = { POSTGRES_PASSWORD: "pg-secret", REDIS_PASSWORD: "redis-secret", DEER_FLOW_JWT_SECRET: "j".repeat(40), DEER_FLOW_MODEL: "gpt-4o-mini" };

function available(cmd: string, args: string[]): boolean {
  const ok = spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
  if (ok) return true;
  if (process.env.DEERFLOW_REQUIRE_DOCKER === "1") throw new Error(`DEERFLOW_REQUIRE_DOCKER=1 but '${cmd}' is not installed (.ci/run installs it with apt)`);
  console.warn(`[deploy compose tests] SKIPPING the ${cmd} checks: '${cmd}' is not installed (apt-get install ${cmd})`);
  return false;
}
const hasCompose = available("docker-compose", ["version"]);
const hasNginx = available("nginx", ["-v"]);
const hasBwrap = hasNginx && available("bwrap", ["--version"]);

function compose(env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  // a clean environment: only what the test passes (plus PATH), so the host's variables change nothing
  return spawnSync("docker-compose", ["-f", COMPOSE, "--project-directory", DIR, "config"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
}

interface ComposeService {
  image: string;
  ports?: unknown[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
  volumes?: (string | { target: string; read_only?: boolean })[];
  read_only?: boolean;
}

describe.skipIf(!hasCompose)("deploy/compose/docker-compose.yml", () => {
  it("validates and wires the gateway to PostgreSQL and Redis through the environment", () => {
    const res = compose(ENV);
    expect(res.stderr).not.toMatch(/invalid|error/i);
    expect(res.status).toBe(0);
    const doc = parse(res.stdout) as { services: Record<string, ComposeService> };
    expect(Object.keys(doc.services).sort()).toEqual(["gateway", "nginx", "postgres", "redis"]);
    const gw = doc.services.gateway;
    expect(gw.environment?.DATABASE_URL).toBe("postgres://deerflow:pg-secret@postgres:5432/deerflow");
    expect(gw.environment?.DEER_FLOW_STREAM_BRIDGE_REDIS_URL).toBe("redis://:redis-secret@redis:6379/0");
    expect(gw.environment?.DEER_FLOW_CONFIG_PATH).toBe("/etc/deerflow/config.yaml");
    expect(gw.read_only).toBe(true);
    // docker-compose 1.x prints short volume syntax, Compose v2 the long one: accept either, read-only
    const mount = gw.volumes?.map((v) => (typeof v === "string" ? v : `${v.target}:${v.read_only ? "ro" : "rw"}`)).find((v) => v.includes("/etc/deerflow/config.yaml"));
    expect(mount).toMatch(/\/etc\/deerflow\/config\.yaml:ro$/);
    expect(gw.depends_on).toEqual({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    // only nginx is published; the gateway, PostgreSQL and Redis stay on the compose network
    expect(Object.entries(doc.services).filter(([, s]) => s.ports?.length).map(([n]) => n)).toEqual(["nginx"]);
    expect(doc.services.nginx.depends_on).toEqual({ gateway: { condition: "service_healthy" } });
    expect(doc.services.postgres.healthcheck).toBeDefined();
    expect(doc.services.redis.healthcheck).toBeDefined();
  });

  it("refuses to start without the secrets, naming the one that is missing", () => {
    const { POSTGRES_PASSWORD: _, ...rest } = ENV;
    const res = compose(rest);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("set POSTGRES_PASSWORD in .env");
  });
});

describe("deploy/compose/config.yaml", () => {
  it("loads as the gateway loads it: PostgreSQL, the Redis bridge and sign-in on, no unknown keys", () => {
    const env: Record<string, string | undefined> = {
      ...ENV,
      DATABASE_URL: "postgres://deerflow:pg-secret@postgres:5432/deerflow",
      DEER_FLOW_STREAM_BRIDGE_REDIS_URL: "redis://:redis-secret@redis:6379/0",
      OPENAI_API_KEY: "sk-test",
    };
    const loaded = loadAppConfig({ path: path.join(DIR, "config.yaml"), env, dotenv: false, logger: silentConfigLogger });
    const config = loaded.config as unknown as Record<string, Record<string, unknown>> & { models: { name: string; model: string }[] };
    expect(loaded.unknownKeys ?? []).toEqual([]);
    expect(config.database.backend).toBe("postgres");
    expect(config.database.postgres_url).toBe(env.DATABASE_URL);
    expect(config.stream_bridge.type).toBe("redis");
    expect(config.stream_bridge.redis_url).toBe(env.DEER_FLOW_STREAM_BRIDGE_REDIS_URL);
    expect(config.auth.enabled).toBe(true);
    expect(config.auth.jwt_secret).toBe(ENV.DEER_FLOW_JWT_SECRET);
    expect(config.models.map((m) => m.model)).toEqual(["gpt-4o-mini"]);
  });
});

describe.skipIf(!hasBwrap)("deploy/compose/nginx.conf", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "df-nginx-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("passes nginx -t with the compose service name resolving as on the compose network", () => {
    // nginx resolves `gateway` while checking; inside compose Docker's DNS does that. Here a private
    // /etc/hosts (bubblewrap bind) gives it an address without touching the machine's own.
    const hosts = path.join(tmp, "hosts");
    writeFileSync(hosts, "127.0.0.1 localhost\n192.0.2.10 gateway\n");
    const res = spawnSync("bwrap", ["--bind", "/", "/", "--dev", "/dev", "--ro-bind", hosts, "/etc/hosts", "nginx", "-t", "-c", path.join(DIR, "nginx.conf")], { encoding: "utf8" });
    expect(res.stderr).toContain("test is successful");
    expect(res.status).toBe(0);
  });

  it("does not buffer the SSE streams and lets a quiet run stream stay open", () => {
    const dump = spawnSync("bwrap", ["--bind", "/", "/", "--dev", "/dev", "--ro-bind", path.join(tmp, "hosts"), "/etc/hosts", "nginx", "-T", "-c", path.join(DIR, "nginx.conf")], { encoding: "utf8" }).stdout;
    const main = /location \/ \{([\s\S]*?)\n {8}\}/.exec(readFileSync(path.join(DIR, "nginx.conf"), "utf8"))?.[1] ?? "";
    expect(dump).toContain("proxy_pass http://deerflow_gateway;");
    expect(main).toMatch(/proxy_buffering off;/);
    expect(main).toMatch(/proxy_cache off;/);
    const seconds = (name: string) => Number(new RegExp(`${name} (\\d+)s;`).exec(main)?.[1] ?? 0);
    expect(seconds("proxy_read_timeout")).toBeGreaterThanOrEqual(600);
    expect(seconds("proxy_send_timeout")).toBeGreaterThanOrEqual(600);
  });
});
