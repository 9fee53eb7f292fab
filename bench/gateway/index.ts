/**
 * Gateway benchmark: N concurrent streaming runs through the real HTTP
 * gateway on loopback, each driven by a ScriptedModel with a fixed latency
 * per call (one tool call + one final answer = 2 model calls per run), side
 * by side with a reference server (`reference-server.ts`: bare node:http
 * writing the same SSE bytes with the same latency, no agent, no storage),
 * both driven by the same client process (`client.ts`).
 *
 * Two latencies are measured: `BENCH_LATENCY_MS` (default 100, the stress
 * case) and `BENCH_TYPICAL_LATENCY_MS` (default 1000, closer to a real LLM
 * call). Each server is warmed up first (`BENCH_WARMUP_ROUNDS` rounds of N
 * runs), so the figures are a warm server's, not the JIT's first minute.
 *
 * The stress burst lasts a few hundred milliseconds, so one burst is at the
 * mercy of the scheduler of a shared machine: it is timed `BENCH_STRESS_ROUNDS`
 * times per server and the round with the median wall time is reported.
 *
 * Env: BENCH_AUTH (off | session | token: sign-in on, see {@link AUTH}), BENCH_RUNS (200), BENCH_LATENCY_MS (100), BENCH_TYPICAL_LATENCY_MS
 * (1000), BENCH_WARMUP_ROUNDS (5), BENCH_STRESS_ROUNDS (5), BENCH_PROFILE_DIR
 * (a CPU profile of the gateway for each stress round).
 * Last line: one JSON object; `runs`, `model_bound_s`, `wall_s`, `ratio`,
 * `ttfe_p50_ms`, `ttfe_p99_ms`, `peak_rss_mb`, `start_spread_ms` (from the
 * first run's first model call to the last run's: how long admitting the
 * burst took) are the gateway's stress-case figures, the other keys are
 * described in bench/README.md. Targets: `over_reference` ≤ 1.3 and
 * `typical_over_reference` ≤ 1.05.
 */
import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import type { Readable, Writable } from "node:stream";
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
import { envInt, percentile, printResultLine } from "../lib";
import { longThread } from "./long-thread";
import { startReferenceServer } from "./reference-server";

const RUNS = envInt("BENCH_RUNS", 200);
/**
 * `BENCH_AUTH`: `off` (default), `session` (sign-in on; the client sends the first admin's session cookie and
 * CSRF token, as the web UI does) or `token` (sign-in on; a personal access token with scope `run`).
 */
const AUTH = (process.env.BENCH_AUTH ?? "off") as "off" | "session" | "token";
if (!["off", "session", "token"].includes(AUTH)) throw new Error(`BENCH_AUTH must be off, session or token, got ${AUTH}`);
const LATENCY = envInt("BENCH_LATENCY_MS", 100);
const TYPICAL_LATENCY = envInt("BENCH_TYPICAL_LATENCY_MS", 1000);
const WARMUP_ROUNDS = envInt("BENCH_WARMUP_ROUNDS", 5);
const STRESS_ROUNDS = Math.max(1, envInt("BENCH_STRESS_ROUNDS", 5));
const LONG_TURNS = envInt("BENCH_LONG_TURNS", 100);
const CALLS_PER_RUN = 2;
/** Targets for the gateway's wall time over the reference's (`over_reference`, `typical_over_reference`). */
const TARGET_OVER_STRESS = 1.3;
const TARGET_OVER_TYPICAL = 1.05;

v8.setFlagsFromString("--expose-gc");
/** A full GC, for heap figures (exposed at runtime: the bench needs no node flag). */
const fullGc = runInNewContext("gc") as () => void;

/** Model latency of the current phase (read by both servers at each model call). */
let latencyMs = LATENCY;

const lookup = tool({
  name: "lookup",
  description: "Look something up",
  schema: z.object({ q: z.string() }),
  execute: ({ q }) => `result for ${q}`,
});

/** When each run of the current phase made its first model call (ms, `performance.now()`). */
let firstCalls: number[] = [];
/** Event-loop CPU (ns) at the first and at the last first model call of the current phase. */
let admissionCpu: number[] = [];
/** When each run of the current phase made its second model call (after its tool step; ms, `performance.now()`). */
let secondCalls: number[] = [];
/** The monotonic clock (µs, a CPU profile's clock) at the first and at the last first model call of the current phase. */
let admissionClock: number[] = [];

// Decide from the conversation, so concurrent runs sharing one model stay independent.
const step: ScriptStep = (request: ModelRequest) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.type === "tool") {
    secondCalls.push(performance.now());
    return { text: "Here is the final answer based on the lookup result.", delayMs: latencyMs };
  }
  firstCalls.push(performance.now());
  if (firstCalls.length === 1 || firstCalls.length === RUNS) {
    admissionCpu.push(mainThreadCpuNs() ?? Number.NaN);
    admissionClock.push(Number(process.hrtime.bigint() / 1000n));
  }
  return { text: "Let me look that up.", toolCalls: [{ name: "lookup", args: { q: "benchmark" } }], delayMs: latencyMs };
};

interface ClientResult {
  wall_s: number;
  ttfe_ms: number[];
  failures: number;
  bytes_per_run: number;
}

/** The load generator (its own process, so the server's CPU and RSS are measured alone). */
class LoadClient {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly replies: string[] = [];
  private waiting: ((line: string) => void) | undefined;

  constructor(url: string, headers: Record<string, string>) {
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "client.ts");
    this.child = spawn(process.execPath, ["--conditions=deerflow-source", "--import", "tsx", script, url], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, BENCH_CLIENT_HEADERS: JSON.stringify(headers) },
    });
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(line);
      } else this.replies.push(line);
    });
  }

  private send<T>(cmd: string): Promise<T> {
    this.child.stdin.write(`${cmd}\n`);
    const queued = this.replies.shift();
    if (queued !== undefined) return Promise.resolve(JSON.parse(queued) as T);
    return new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bench client exited (${code}) during '${cmd}'`));
      this.child.once("exit", onExit);
      this.waiting = (line) => {
        this.child.off("exit", onExit);
        resolve(JSON.parse(line) as T);
      };
    });
  }

  prepare(n: number): Promise<{ prepared: number }> {
    return this.send(`prepare ${n}`);
  }

  go(): Promise<ClientResult> {
    return this.send("go");
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin.write("exit\n");
    this.child.stdin.end();
    await exited;
  }
}

/**
 * Start a CPU profile of this process when `BENCH_PROFILE_DIR` is set. The file also holds `admission`: the
 * profile-clock times (µs; V8's clock is the monotonic one `process.hrtime` reads) of the first and the last
 * first model call, so the samples of the admission alone can be picked out.
 */
async function startProfile(): Promise<(() => Promise<string>) | undefined> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return undefined;
  const inspector = await import("node:inspector/promises");
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 1000) });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `gateway-${Date.now()}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify({ ...profile, admission: admissionClock }));
    session.disconnect();
    return file;
  };
}

interface PhaseResult extends ClientResult {
  latency_ms: number;
  model_bound_s: number;
  ratio: number;
  server_cpu_ms_per_run: number;
  /** On-CPU time of the event-loop thread alone ÷ runs (Linux; null elsewhere): where the burst queues. */
  main_thread_cpu_ms_per_run: number | null;
  /** From the first run's first model call to the last run's (the gateway only): how long admitting the burst took. */
  start_spread_ms: number | null;
  /** Event-loop CPU spent within that spread ÷ runs (Linux; null elsewhere): what admitting one run costs. */
  admission_cpu_ms_per_run: number | null;
  /** From the first run's second model call to the last run's: how long the burst's tool steps took to get through. */
  second_call_spread_ms: number | null;
}

/**
 * Nanoseconds this thread (the event loop: timedPhase runs on it) has spent on a CPU, from the scheduler's own
 * account; unlike wall time it does not count the moments the thread was waiting for a core. Null off Linux.
 */
function mainThreadCpuNs(): number | null {
  try {
    return Number(fs.readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]);
  } catch {
    return null;
  }
}

/** One timed phase: fresh threads, every run started at once; server CPU taken around it. */
async function timedPhase(client: LoadClient, latency: number, profile = false): Promise<PhaseResult> {
  latencyMs = latency;
  await client.prepare(RUNS);
  const stopProfile = profile ? await startProfile() : undefined;
  firstCalls = [];
  admissionCpu = [];
  secondCalls = [];
  admissionClock = [];
  const main0 = mainThreadCpuNs();
  const cpu0 = process.cpuUsage();
  const r = await client.go();
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuNs();
  const file = await stopProfile?.();
  if (file) console.log(`  CPU profile of the timed phase: ${file}`);
  const modelBound = (CALLS_PER_RUN * latency) / 1000;
  return {
    ...r,
    latency_ms: latency,
    model_bound_s: modelBound,
    ratio: r.wall_s / modelBound,
    server_cpu_ms_per_run: (cpu.user + cpu.system) / 1000 / RUNS,
    main_thread_cpu_ms_per_run: main0 !== null && main1 !== null ? (main1 - main0) / 1e6 / RUNS : null,
    start_spread_ms: firstCalls.length ? firstCalls[firstCalls.length - 1] - firstCalls[0] : null,
    second_call_spread_ms: secondCalls.length ? secondCalls[secondCalls.length - 1] - secondCalls[0] : null,
    admission_cpu_ms_per_run: admissionCpu.length === 2 && Number.isFinite(admissionCpu[1] - admissionCpu[0]) ? (admissionCpu[1] - admissionCpu[0]) / 1e6 / RUNS : null,
  };
}

/** The stress figures of one server: the round with the median wall time, and every round's wall time. */
interface StressResult extends PhaseResult {
  walls_s: number[];
}

/**
 * With sign-in on: create the first admin and return the headers every bench request carries (its session cookie
 * and CSRF token, or a `run` personal access token). Without: none.
 */
async function signIn(url: string): Promise<Record<string, string>> {
  if (AUTH === "off") return {};
  const res = await fetch(`${url}/api/v1/auth/initialize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "bench-admin-passphrase" }),
  });
  if (res.status !== 201) throw new Error(`bench sign-in: initialize answered ${res.status} ${await res.text()}`);
  const cookies = new Map(res.headers.getSetCookie().map((c) => c.split(";")[0]!.split("=") as [string, string]));
  const session = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "), "x-csrf-token": cookies.get("csrf_token") ?? "" };
  if (AUTH === "session") return session;
  const minted = await fetch(`${url}/api/v1/auth/tokens`, {
    method: "POST",
    headers: { ...session, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: ["run"] }),
  });
  if (minted.status !== 201) throw new Error(`bench sign-in: token answered ${minted.status} ${await minted.text()}`);
  return { authorization: `Bearer ${((await minted.json()) as { token: string }).token}` };
}

/** The round of median wall time (the lower middle one for an even count). */
function medianRound(rounds: PhaseResult[]): StressResult {
  const byWall = [...rounds].sort((a, b) => a.wall_s - b.wall_s);
  return { ...byWall[(byWall.length - 1) >> 1]!, walls_s: rounds.map((r) => r.wall_s) };
}

/** Warm a server up, then measure the stress (several rounds) and the typical latency. */
async function measureServer(url: string, profile: boolean, headers: Record<string, string> = {}): Promise<{ stress: StressResult; typical: PhaseResult }> {
  const client = new LoadClient(url, headers);
  try {
    latencyMs = LATENCY;
    for (let i = 0; i < WARMUP_ROUNDS; i++) {
      await client.prepare(RUNS);
      const w = await client.go();
      if (w.failures) throw new Error(`${w.failures} warm-up run(s) failed`);
    }
    const rounds: PhaseResult[] = [];
    for (let i = 0; i < STRESS_ROUNDS; i++) rounds.push(await timedPhase(client, LATENCY, profile));
    const typical = await timedPhase(client, TYPICAL_LATENCY);
    const stress = medianRound(rounds);
    return { stress: { ...stress, failures: rounds.reduce((n, r) => n + r.failures, 0) }, typical };
  } finally {
    await client.close();
  }
}

function line(label: string, r: PhaseResult): void {
  const sorted = [...r.ttfe_ms].sort((a, b) => a - b);
  console.log(
    `  ${label.padEnd(10)} ${String(r.latency_ms).padStart(5)} ms/call: wall ${r.wall_s.toFixed(3)} s vs model-bound ${r.model_bound_s.toFixed(1)} s → ratio ${r.ratio.toFixed(2)};` +
      ` TTFE p50 ${percentile(sorted, 50).toFixed(0)} / p99 ${percentile(sorted, 99).toFixed(0)} ms; server CPU ${r.server_cpu_ms_per_run.toFixed(2)} ms/run` +
      (r.main_thread_cpu_ms_per_run !== null ? ` (event loop ${r.main_thread_cpu_ms_per_run.toFixed(2)})` : "") +
      `; ${r.bytes_per_run} B/run` +
      (r.start_spread_ms !== null ? `; model calls of all runs started within ${r.start_spread_ms.toFixed(0)} ms` : "") +
      (r.second_call_spread_ms !== null ? `, their second calls within ${r.second_call_spread_ms.toFixed(0)} ms` : "") +
      (r.admission_cpu_ms_per_run !== null ? ` (event-loop CPU ${r.admission_cpu_ms_per_run.toFixed(3)} ms per run admitted)` : "") +
      (r.failures ? `; ${r.failures} FAILED` : ""),
  );
}

function walls(r: StressResult): void {
  if (r.walls_s.length > 1) console.log(`  ${"".padEnd(10)} stress wall of each of ${r.walls_s.length} rounds: ${r.walls_s.map((w) => w.toFixed(3)).join(", ")} s (the median round is shown)`);
}

async function main(): Promise<void> {
  console.log(
    `gateway bench: ${RUNS} concurrent streaming runs, ${CALLS_PER_RUN} model calls each, ${WARMUP_ROUNDS} warm-up rounds per server, 2 cores shared with the client, sign-in ${AUTH}`,
  );

  // The gateway first, so the peak RSS read after it is the gateway's.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-gateway-"));
  const checkpointer = new SqliteCheckpointStore(path.join(dataDir, "deerflow.db"));
  const model = new ScriptedModel([step], { onExhausted: "repeat-last", recordRequests: false });
  const agent = createAgent({ model, tools: [lookup], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
  const auth = AUTH === "off" ? undefined : { enabled: true, jwt_secret: "bench-gateway-session-secret-0123456789abcdef" };
  const gateway = await createGateway({ dataDir, database: checkpointer.db, checkpointer, webDistDir: null, agentFactory: () => agent, auth });
  const gatewayUrl = await gateway.start({ port: 0 });
  const headers = await signIn(gatewayUrl);
  fullGc();
  const heapBefore = process.memoryUsage().heapUsed;
  const ours = await measureServer(gatewayUrl, !!process.env.BENCH_PROFILE_DIR, headers);
  // Every run of the phases above finished within the replay window (reapAfterMs, 60 s): their
  // buffers, thread states in the checkpoint cache and records are all still held.
  fullGc();
  const runsSoFar = RUNS * (WARMUP_ROUNDS + STRESS_ROUNDS + 1);
  const heapPerRunKb = (process.memoryUsage().heapUsed - heapBefore) / runsSoFar / 1024;
  const peakRss = process.resourceUsage().maxRSS * 1024;
  latencyMs = 0;
  const db = checkpointer.db;
  const long = await longThread(gatewayUrl, headers, () => Number(db.pragma("page_count", { simple: true })) * Number(db.pragma("page_size", { simple: true })), LONG_TURNS);
  await gateway.close();
  await checkpointer.close();
  fs.rmSync(dataDir, { recursive: true, force: true });

  const reference = await startReferenceServer(() => latencyMs);
  const ref = await measureServer(reference.url, false);
  await reference.close();

  console.log("gateway (Hono, validation, run manager, agent loop, SQLite checkpoints + run records):");
  line("stress", ours.stress);
  walls(ours.stress);
  line("typical", ours.typical);
  console.log("reference (bare node:http writing the same SSE bytes; the floor on this machine):");
  line("stress", ref.stress);
  walls(ref.stress);
  line("typical", ref.typical);
  // The reference stands for "the same bytes, written by the cheapest server": if the gateway's frames change,
  // reference-server.ts must follow, or the comparison is of two different workloads.
  const bytesOff = Math.abs(ours.stress.bytes_per_run - ref.stress.bytes_per_run) / ours.stress.bytes_per_run;
  if (bytesOff > 0.02) {
    console.log(`  WARNING: the reference writes ${ref.stress.bytes_per_run} B/run, the gateway ${ours.stress.bytes_per_run}: update reference-server.ts to the gateway's frames`);
  }
  const overStress = ours.stress.wall_s / ref.stress.wall_s;
  const overTypical = ours.typical.wall_s / ref.typical.wall_s;
  console.log(`  gateway ÷ reference wall time: stress ${overStress.toFixed(2)}, typical ${overTypical.toFixed(2)}`);
  console.log(`  peak RSS of the gateway process: ${(peakRss / 1024 / 1024).toFixed(1)} MB`);
  console.log(
    `  JS heap held per run finished in the last 60 s (replay buffer, cached thread state, records): ${heapPerRunKb.toFixed(1)} KB (${runsSoFar} runs)`,
  );
  // The targets are on the gateway's own cost: its wall time over the reference's, same load, same machine.
  for (const [label, over, target] of [
    ["stress", overStress, TARGET_OVER_STRESS],
    ["typical", overTypical, TARGET_OVER_TYPICAL],
  ] as const) {
    console.log(`  target gateway ÷ reference ≤ ${target} (${label}): ${over <= target ? "met" : "NOT met"} (${over.toFixed(2)})`);
  }
  console.log(`long thread (${long.turns} turns on one thread, one after another, instant model):`);
  console.log(
    `  ms per turn: turns 6–15 ${long.early_ms.toFixed(2)}, last 10 ${long.late_ms.toFixed(2)} → growth ${long.growth.toFixed(2)} (messages-tuple + updates);` +
      ` ${long.growth_with_values.toFixed(2)} with values (the whole state every step, by design)`,
  );
  console.log(`  database growth: ${(long.db_bytes_per_turn / 1024).toFixed(1)} KB per turn`);
  const failures = ours.stress.failures + ours.typical.failures + ref.stress.failures + ref.typical.failures;
  if (failures) console.log(`  WARNING: ${failures} run(s) did not end cleanly`);

  const sorted = [...ours.stress.ttfe_ms].sort((a, b) => a - b);
  const typicalSorted = [...ours.typical.ttfe_ms].sort((a, b) => a - b);
  const r3 = (x: number) => Number(x.toFixed(3));
  printResultLine({
    runs: RUNS,
    latency_ms: LATENCY,
    model_bound_s: r3(ours.stress.model_bound_s),
    wall_s: r3(ours.stress.wall_s),
    ratio: r3(ours.stress.ratio),
    ttfe_p50_ms: Number(percentile(sorted, 50).toFixed(1)),
    ttfe_p99_ms: Number(percentile(sorted, 99).toFixed(1)),
    peak_rss_mb: Number((peakRss / 1024 / 1024).toFixed(1)),
    heap_kb_per_recent_run: Number(heapPerRunKb.toFixed(1)),
    server_cpu_ms_per_run: Number(ours.stress.server_cpu_ms_per_run.toFixed(2)),
    main_thread_cpu_ms_per_run: ours.stress.main_thread_cpu_ms_per_run === null ? null : Number(ours.stress.main_thread_cpu_ms_per_run.toFixed(3)),
    reference_main_thread_cpu_ms_per_run: ref.stress.main_thread_cpu_ms_per_run === null ? null : Number(ref.stress.main_thread_cpu_ms_per_run.toFixed(3)),
    start_spread_ms: Number((ours.stress.start_spread_ms ?? 0).toFixed(1)),
    second_call_spread_ms: Number((ours.stress.second_call_spread_ms ?? 0).toFixed(1)),
    admission_cpu_ms_per_run: ours.stress.admission_cpu_ms_per_run === null ? null : Number(ours.stress.admission_cpu_ms_per_run.toFixed(3)),
    reference_ratio: r3(ref.stress.ratio),
    over_reference: r3(overStress),
    stress_rounds: STRESS_ROUNDS,
    typical_latency_ms: TYPICAL_LATENCY,
    typical_ratio: r3(ours.typical.ratio),
    typical_ttfe_p99_ms: Number(percentile(typicalSorted, 99).toFixed(1)),
    typical_reference_ratio: r3(ref.typical.ratio),
    typical_over_reference: r3(overTypical),
    long_turns: long.turns,
    long_turn_growth: r3(long.growth),
    long_turn_growth_with_values: r3(long.growth_with_values),
    long_db_kb_per_turn: Number((long.db_bytes_per_turn / 1024).toFixed(2)),
    failures,
    auth: AUTH,
  });
  if (failures) process.exitCode = 1;
}

await main();
