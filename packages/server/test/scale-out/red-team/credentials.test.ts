/**
 * Red team: the Redis and PostgreSQL passwords of a multi-process deployment
 * never leave the server. Redis runs with `requirepass` (a redis-server of
 * this file's own), PostgreSQL is reached as a role whose URL carries a
 * password, both with characters that need URL encoding. They are looked
 * for in everything a client or an onlooker can read: every process's
 * output (start, runs, a Redis outage and its recovery, a failed start),
 * `deerflow doctor`, API answers, run events and records, and process
 * command lines. A `rediss://` URL on a server without TLS is refused with a
 * clear error, never used in plaintext.
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@deerflow-ts/harness/testing";
import { createThread, getRun, humanInput, joinRun, runIdOf, streamRun, waitForRun } from "../helpers/runs-api";
import { REPO_ROOT, startServe } from "../helpers/serve-process";
import type { ServeProcess } from "../helpers/serve-process";
import { startDeployment } from "./deployment";
import type { Deployment } from "./deployment";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;
const REDIS_BIN = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => fs.existsSync(p));

/** Passwords with URL-special characters, so both the raw and the encoded forms are looked for. */
const REDIS_PASSWORD = "rt-Redis/pa@ss:word-7f3a";
const PG_PASSWORD = "rt-Pg#pa@ss:word-91c2";
const enc = encodeURIComponent;

/** A redis-server with `requirepass` on a fixed loopback port (restartable on the same port). */
class PasswordRedis {
  private child: ChildProcess | undefined;
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-rt-redis-"));
  constructor(
    readonly port: number,
    readonly password: string,
  ) {}
  async start(): Promise<void> {
    this.child = spawn(REDIS_BIN!, ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir, "--requirepass", this.password], { stdio: "ignore" });
    for (let i = 0; i < 400; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(this.port, "127.0.0.1");
        s.once("connect", () => (s.destroy(), resolve(true)));
        s.once("error", () => resolve(false));
      });
      if (up) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("redis-server with requirepass did not start");
  }
  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  }
  url(password = this.password, scheme = "redis"): string {
    return `${scheme}://:${enc(password)}@127.0.0.1:${this.port}`;
  }
  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Every spelling of a secret that would count as a leak. */
function forms(secret: string): string[] {
  return [secret, enc(secret), secret.slice(3, 15)];
}

function expectNoSecret(text: string, where: string): void {
  for (const s of [...forms(REDIS_PASSWORD), ...forms(PG_PASSWORD), ...forms("wrong-Redis-pw-3e8d")]) expect(text.includes(s), `${where} contains ${s}`).toBe(false);
}

/** `/proc/{pid}/cmdline` of the process and its children. */
function commandLines(pid: number): string {
  const out: string[] = [];
  const walk = (p: number) => {
    try {
      out.push(fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " "));
      for (const child of fs.readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) walk(Number(child));
    } catch {
      // gone
    }
  };
  walk(pid);
  return out.join("\n");
}

describe.skipIf(!PG || !REDIS || !REDIS_BIN)("red team: Redis and PostgreSQL credentials", { timeout: 60_000 }, () => {
  let redis: PasswordRedis;
  let role: string;
  let pgUrl: string;
  let d: Deployment;
  const admin = () => new pg.Client({ connectionString: PG });

  beforeAll(async () => {
    redis = new PasswordRedis(await freePort(), REDIS_PASSWORD);
    await redis.start();
    role = `rt_pw_${process.pid}_${Date.now().toString(36)}`;
    const c = admin();
    await c.connect();
    try {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${PG_PASSWORD}'`);
      await c.query(`CREATE DATABASE ${role} OWNER ${role}`);
    } finally {
      await c.end();
    }
    const u = new URL(PG!);
    pgUrl = `postgres://${role}:${enc(PG_PASSWORD)}@${u.host}/${role}`;
    // the Redis URL from the environment ($VAR in config.yaml), the PostgreSQL one written into config.yaml itself
    d = await startDeployment({
      processes: 2,
      auth: false,
      postgresUrl: pgUrl,
      redisUrl: "$RT_REDIS_URL",
      env: { RT_REDIS_URL: redis.url() },
    });
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") console.error(d?.output().slice(-6000));
  });

  afterAll(async () => {
    await d?.stop();
    await redis?.stop();
    redis?.cleanup();
    const c = admin();
    await c.connect();
    try {
      await c.query(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await c.end();
    }
  });

  it("the deployment really runs on the passworded Redis (a client without the password is refused)", async () => {
    // a client without the password gets nothing (a raw PING, so no driver hides the answer)
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(redis.port, "127.0.0.1", () => sock.write("PING\r\n"));
      sock.once("data", (b) => (sock.destroy(), resolve(b.toString())));
      sock.once("error", reject);
    });
    expect(answer).toMatch(/^-NOAUTH/);
    const authed = new Redis(redis.url());
    const names = String(await authed.client("LIST"));
    await authed.quit();
    expect(names).toMatch(/name=deerflow-commands/);
  });

  it("a run streamed from one process and joined from the other: no password in its events, record, API answers, output or command lines", async () => {
    const [p1, p2] = d.procs;
    const tid = await createThread(p1!.api);
    const s = await streamRun(p1!.api, tid, "[stream 30 5] show me your config");
    const runId = await runIdOf(s);
    const joined = await joinRun(p2!.api, tid, runId);
    const frames = [...(await s.done), ...(await joined.done)];
    expect(frames.at(-1)?.event).toBe("end");
    expectNoSecret(JSON.stringify(frames), "the run's events");
    const probes = [
      "/health",
      "/api/models",
      "/api/features",
      "/api/mcp/config",
      "/api/skills",
      "/api/agents",
      "/api/memory",
      "/api/suggestions/config",
      "/api/v1/auth/setup-status",
      `/api/threads/${tid}`,
      `/api/threads/${tid}/state`,
      `/api/threads/${tid}/history`,
      `/api/threads/${tid}/runs`,
      `/api/threads/${tid}/runs/${runId}`,
      "/api/does-not-exist",
    ];
    for (const p of [p1!, p2!]) {
      for (const probe of probes) {
        const res = await fetch(`${p.url}${probe}`);
        expectNoSecret(await res.text(), `${p.name} ${probe}`);
      }
      expectNoSecret(commandLines(p.pid), `${p.name}'s command lines`);
    }
    expectNoSecret(d.output(), "the processes' output");
  });

  it("a Redis outage mid-run and the recovery: the run fails cleanly and nothing printed or stored names a password", async () => {
    const [p1, p2] = d.procs;
    const tid = await createThread(p1!.api);
    // a run that keeps writing events while Redis is gone (a quiet run is not affected until it writes)
    const s = await streamRun(p1!.api, tid, "[stream 600 20] during the outage");
    const runId = await runIdOf(s);
    const remote = await joinRun(p2!.api, tid, runId);
    await remote.waitFor((f) => f.event === "messages");
    await redis.stop();
    const err = await s.waitFor((f) => f.event === "error", 20_000);
    expectNoSecret(JSON.stringify(err.data), "the outage's error event (owner)");
    const remoteErr = await remote.waitFor((f) => f.event === "error", 20_000);
    expectNoSecret(JSON.stringify(remoteErr.data), "the outage's error event (other process)");
    expect(await waitForRun(p2!.api, tid, runId, (st) => st !== "running", 800)).toBe("error");
    const rec = await getRun(p2!.api, tid, runId);
    expectNoSecret(JSON.stringify(rec), "the failed run's record");
    // the outage is reported with the masked URL
    await p1!.waitFor(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+.*failed/, 20_000);
    // a new run while Redis is down fails at once, with a clean message
    const refused = await fetch(`${p2!.api}/threads/${tid}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: humanInput("while down") }),
    });
    expectNoSecret(await refused.text(), "a run refused during the outage");
    await redis.start();
    await p1!.waitFor(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ \(\S+ connection\) is reachable again/, 20_000);
    const again = await streamRun(p2!.api, await createThread(p2!.api), "after the outage");
    expect((await again.done).at(-1)?.event).toBe("end");
    expectNoSecret(d.output(), "the processes' output after the outage");
  });

  /** Start a process that must refuse to start; its output once it exited (a hang past 30 s fails). */
  async function failedStart(name: string, env: NodeJS.ProcessEnv, configPath = d.configPath, dataDir = d.dataDir): Promise<string> {
    const p: ServeProcess = await startServe({ name, configPath, dataDir, env, noWait: true });
    const exit = await Promise.race([p.waitExit(), new Promise<"hung">((r) => setTimeout(() => r("hung"), 30_000))]);
    if (exit === "hung") await p.stop();
    expect(exit, `${name} must fail its start, not hang or serve:\n${p.output}`).not.toBe("hung");
    expect((exit as { code: number | null }).code, p.output).not.toBe(0);
    expect(p.output).not.toMatch(/DeerFlow is running/);
    return p.output;
  }

  it("a wrong Redis password, rediss:// to a Redis without TLS, and an unreachable PostgreSQL each stop the start with a clear, masked message", async () => {
    const watcher = new Redis(redis.url());
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-rt-pg-"));
    try {
      const dead = await freePort();
      const pgDownConfig = path.join(root, "config.yaml");
      fs.writeFileSync(pgDownConfig, fs.readFileSync(d.configPath, "utf8").replace(/postgres_url: .*/, `postgres_url: postgres://${role}:${enc(PG_PASSWORD)}@127.0.0.1:${dead}/${role}`));
      const [wrong, tls, pgDown] = await Promise.all([
        failedStart("wrong-pw", { RT_REDIS_URL: redis.url("wrong-Redis-pw-3e8d") }),
        failedStart("rediss", { RT_REDIS_URL: redis.url(REDIS_PASSWORD, "rediss") }),
        failedStart("pg-down", { RT_REDIS_URL: redis.url() }, pgDownConfig, path.join(root, "data")),
      ]);
      // the driver's reason, not "Connection is closed."
      expect(wrong).toContain("stream_bridge.redis_url");
      expect(wrong).toMatch(/WRONGPASS/);
      // TLS is never given up for plaintext: the start fails and says why
      expect(tls).toContain("stream_bridge.redis_url");
      expect(tls).toMatch(/rediss:\/\/ \(TLS\)/);
      expect(pgDown).toMatch(/postgres_url|PostgreSQL/);
      for (const [what, out] of [["wrong password", wrong], ["rediss", tls], ["PostgreSQL down", pgDown]] as const) expectNoSecret(out, `the failed start's output (${what})`);
      // none of the refused starts left a connection behind: only the deployment's two processes × 3 remain
      const clients = String(await watcher.client("LIST"));
      expect(clients.match(/name=deerflow-\S+/g)?.length ?? 0).toBe(6);
    } finally {
      await watcher.quit();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("deerflow doctor checks both services and prints their URLs masked", () => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, "packages/cli/bin/deerflow.js"), "doctor", "--skip-model", "--config", d.configPath, "--data-dir", d.dataDir], {
      env: { ...process.env, RT_REDIS_URL: redis.url(), NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 45_000,
    });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toMatch(/PostgreSQL/);
    expect(out).toMatch(/Redis/);
    expect(out).toMatch(/\*\*\*/);
    expectNoSecret(out, "doctor's output");
  });
});
