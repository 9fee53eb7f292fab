/**
 * Startup: cold start of the installed package, as a new user starts it. Packs every published package,
 * installs the tarballs into an empty folder (test/packaging/installed-package.ts), then runs
 * `deerflow serve --demo` from a fresh empty directory each time until GET /health answers 200 — the
 * median of STARTUP_RUNS (default 5) — beside a bare `node` HTTP server started the same way in the same
 * run. Per start: wall time to the first 200, CPU time of the process by then (user + system, from
 * /proc), and its RSS once idle. Prints ratios to bare node and ends with one JSON line.
 *
 * Targets: ≤ 0.5 s to /health and ≤ 3× bare node's CPU per start.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { packAndInstall } from "../../test/packaging/installed-package";
import { envInt, heading, median, printResultLine, report, round } from "../lib";

const RUNS = envInt("STARTUP_RUNS", 5);
/** How long an idle server is left before its RSS is read (its startup allocations settle). */
const IDLE_SETTLE_MS = envInt("STARTUP_IDLE_MS", 1000);
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface Start {
  wallMs: number;
  cpuMs: number;
  idleRssMb: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** utime + stime of a live process, in milliseconds. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000;
}

function processRssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(url);
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Starts `argv` in a fresh empty directory, polls /health until 200, reads CPU and idle RSS, stops it. */
async function coldStart(argv: string[], env: NodeJS.ProcessEnv): Promise<Start> {
  const cwd = mkdtempSync(path.join(os.tmpdir(), "dfbench-startup-"));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...argv, String(port)], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    const url = `http://127.0.0.1:${port}/health`;
    while (!(await healthy(url))) {
      if (exited) throw new Error(`${argv.join(" ")} exited before answering /health:\n${stderr}`);
      if (performance.now() - started > 60_000) throw new Error(`${argv.join(" ")}: no 200 on /health within 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const wallMs = performance.now() - started;
    const cpuMs = processCpuMs(child.pid!);
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const idleRssMb = processRssMb(child.pid!);
    return { wallMs, cpuMs, idleRssMb };
  } finally {
    child.kill("SIGKILL");
    if (!exited) await new Promise((r) => child.once("exit", r));
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function series(label: string, argv: string[], env: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number; rss: number }> {
  await coldStart(argv, env); // warms the OS file cache, as any second start of an installed package has it
  const runs: Start[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await coldStart(argv, env));
  const wall = median(runs.map((r) => r.wallMs));
  const cpu = median(runs.map((r) => r.cpuMs));
  const rss = median(runs.map((r) => r.idleRssMb));
  report(label, `${round(wall, 0)} ms to /health, ${round(cpu, 0)} ms CPU, idle RSS ${round(rss, 1)} MB  (runs: ${runs.map((r) => round(r.wallMs, 0)).join(", ")} ms)`);
  return { wall, cpu, rss };
}

async function main(): Promise<void> {
  heading("Installing the packed tarballs into an empty folder");
  const installed = packAndInstall({ log: (l) => report("install", l) });
  try {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1" };
    heading(`Cold start to a 200 on /health, median of ${RUNS} (load average ${os.loadavg()[0].toFixed(1)})`);
    const bareScript = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')";
    const bare = await series("bare node HTTP server", ["-e", bareScript], env);
    const serve = await series("deerflow serve --demo (installed)", [installed.bin, "serve", "--demo", "--port"], env);
    heading("Ratios");
    report("wall, serve / bare node", `${round(serve.wall / bare.wall, 2)}x  (target: serve ≤ 500 ms: ${serve.wall <= 500 ? "met" : "not met"})`);
    report("CPU per start, serve / bare node", `${round(serve.cpu / bare.cpu, 2)}x  (target ≤ 3x: ${serve.cpu / bare.cpu <= 3 ? "met" : "not met"})`);
    report("idle RSS, serve", `${round(serve.rss, 1)} MB (bare node ${round(bare.rss, 1)} MB)`);
    printResultLine({
      runs: RUNS,
      install_s: round(installed.installMs / 1000, 1),
      serve_health_ms: round(serve.wall, 0),
      bare_node_health_ms: round(bare.wall, 0),
      wall_vs_bare: round(serve.wall / bare.wall, 2),
      serve_cpu_ms: round(serve.cpu, 0),
      bare_node_cpu_ms: round(bare.cpu, 0),
      cpu_vs_bare: round(serve.cpu / bare.cpu, 2),
      serve_idle_rss_mb: round(serve.rss, 1),
      bare_node_idle_rss_mb: round(bare.rss, 1),
      load_average: round(os.loadavg()[0], 1),
    });
  } finally {
    installed.close();
  }
}

void main();
