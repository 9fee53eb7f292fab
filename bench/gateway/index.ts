/**
 * Gateway benchmark: N concurrent streaming runs through the real HTTP
 * server on loopback, each driven by a ScriptedModel with a fixed latency
 * (one tool call + one final answer = 2 model calls per run).
 *
 * Env: BENCH_RUNS (default 200), BENCH_LATENCY_MS (default 100).
 * Last line: one JSON object with runs, model_bound_s, wall_s, ratio,
 * ttfe_p50_ms, ttfe_p99_ms, peak_rss_mb.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { SqliteCheckpointStore } from "../../packages/harness/src/checkpoints";
import type { ModelRequest } from "../../packages/harness/src/models/types";
import { createAgent } from "../../packages/harness/src/runtime";
import { threadStateSchema } from "../../packages/harness/src/state";
import { ScriptedModel } from "../../packages/harness/src/testing";
import type { ScriptStep } from "../../packages/harness/src/testing";
import { tool } from "../../packages/harness/src/tools";
import { createGateway } from "../../packages/server/src/gateway";

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 100);
const CALLS_PER_RUN = 2;

const lookup = tool({
  name: "lookup",
  description: "Look something up",
  schema: z.object({ q: z.string() }),
  execute: ({ q }) => `result for ${q}`,
});

// Decide from the conversation, so concurrent runs sharing one model stay independent.
const step: ScriptStep = (request: ModelRequest) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.type === "tool") return "Here is the final answer based on the lookup result.";
  return { text: "Let me look that up.", toolCalls: [{ name: "lookup", args: { q: "benchmark" } }] };
};

/**
 * Run the load generator in its own process (server CPU and RSS measured
 * alone). `onReady` runs when the client finished its warm-up; the timed
 * phase starts once it resolves.
 */
function runClient(url: string, runs: number, onReady: () => Promise<void>): Promise<{ wall_s: number; ttfe_ms: number[]; failures: number }> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "client.ts");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, url, String(runs)], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    let readySeen = false;
    child.stdout.on("data", (d) => {
      out += d;
      if (!readySeen && out.includes("ready\n")) {
        readySeen = true;
        void onReady().then(() => child.stdin.write("go\n"));
      }
    });
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) reject(new Error(`bench client failed (exit ${code})`));
      else resolve(JSON.parse(line));
    });
  });
}

/** Start a CPU profile of this process (the server) when `BENCH_PROFILE_DIR` is set. */
async function startProfile(): Promise<(() => Promise<string>) | undefined> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return undefined;
  const inspector = await import("node:inspector/promises");
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `gateway-${Date.now()}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    return file;
  };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-gateway-"));
  const checkpointer = new SqliteCheckpointStore(path.join(dataDir, "deerflow.db"));
  const model = new ScriptedModel([step], { onExhausted: "repeat-last", latencyMs: LATENCY, recordRequests: false });
  const agent = createAgent({ model, tools: [lookup], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
  const gateway = await createGateway({
    dataDir,
    database: checkpointer.db,
    checkpointer,
    webDistDir: null,
    agentFactory: () => agent,
  });
  const url = await gateway.start({ port: 0 });

  let cpu0 = process.cpuUsage();
  let stopProfile: (() => Promise<string>) | undefined;
  const client = await runClient(url, RUNS, async () => {
    stopProfile = await startProfile();
    cpu0 = process.cpuUsage();
  });
  const cpu = process.cpuUsage(cpu0);
  const profileFile = await stopProfile?.();
  const ttfe = client.ttfe_ms;
  const failures = client.failures;
  const wall = client.wall_s;
  // Peak resident set size of this (server) process, tracked by the OS: no sampling overhead.
  const peakRss = process.resourceUsage().maxRSS * 1024;
  await gateway.close();
  await checkpointer.close();
  fs.rmSync(dataDir, { recursive: true, force: true });

  const modelBound = (CALLS_PER_RUN * LATENCY) / 1000;
  ttfe.sort((a, b) => a - b);
  const result = {
    runs: RUNS,
    model_bound_s: Number(modelBound.toFixed(3)),
    wall_s: Number(wall.toFixed(3)),
    ratio: Number((wall / modelBound).toFixed(3)),
    ttfe_p50_ms: Number(percentile(ttfe, 50).toFixed(1)),
    ttfe_p99_ms: Number(percentile(ttfe, 99).toFixed(1)),
    peak_rss_mb: Number((peakRss / 1024 / 1024).toFixed(1)),
    server_cpu_ms_per_run: Number(((cpu.user + cpu.system) / 1000 / RUNS).toFixed(2)),
  };
  console.log(`gateway bench: ${RUNS} concurrent streaming runs, ${CALLS_PER_RUN} model calls x ${LATENCY} ms each`);
  console.log(`  completion ${result.wall_s}s vs model-bound ${result.model_bound_s}s → ratio ${result.ratio} (target ≤ 1.3)`);
  console.log(`  time to first event p50 ${result.ttfe_p50_ms} ms, p99 ${result.ttfe_p99_ms} ms; peak RSS ${result.peak_rss_mb} MB (server process)`);
  console.log(`  server CPU ${result.server_cpu_ms_per_run} ms per run (timed phase only)`);
  if (profileFile) console.log(`  CPU profile of the timed phase: ${profileFile}`);
  if (failures) console.log(`  WARNING: ${failures} run(s) did not end cleanly`);
  console.log(JSON.stringify(result));
  if (failures) process.exitCode = 1;
}

await main();
