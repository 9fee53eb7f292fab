/**
 * The Docker tier: cold create (a new thread's container created and started), warm acquire (a
 * new thread handed a pre-created pool container), re-acquire of an idle thread, per-command
 * overhead of `echo hi` through exec, and memory per idle container (`docker stats`: usage
 * minus page cache). Skipped with a notice when no daemon answers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { envInt } from "../lib";
import { parseSandboxConfig } from "../../packages/harness/src/sandbox";
import { DEFAULT_DOCKER_IMAGE, DockerEngine, DockerSandboxProvider, LABELS } from "../../packages/harness/src/sandbox/docker";
import type { DockerSandbox } from "../../packages/harness/src/sandbox/docker";
import { buildImageFromHost } from "../../packages/harness/src/sandbox/image";
import { plainOnce, RUNS, sandboxOnce, WARMUP } from "./bwrap";

/** Figures of the Docker part (ms unless named otherwise). */
export interface DockerFigures {
  image: string;
  version: string;
  cold: number[];
  firstCommand: number[];
  warm: number[];
  reacquire: number[];
  exec: number[];
  /** Per command after a pause (as between an agent's tool calls): the exec started ahead is ready. */
  execPaused: number[];
  /** How many timed commands ran in an exec started ahead, of all timed ones. */
  execWarm: { warm: number; total: number };
  plain: number[];
  /** Bytes per idle container (usage minus page cache). */
  memory: number[];
  leftBehind: number;
}

/** Why the Docker part did not run. */
export interface DockerSkipped {
  skipped: string;
}

const BENCH_IMAGE = "deerflow-bench-sandbox:host";

/** Untimed pause before each command of the "after a pause" series (ms). */
const PAUSE_MS = 300;

/** The image to time: BENCH_DOCKER_IMAGE, else the default image when built, else one from this host (cached by content). */
async function benchImage(engine: DockerEngine, log: (m: string) => void): Promise<string> {
  const chosen = process.env.BENCH_DOCKER_IMAGE?.trim();
  if (chosen) {
    await engine.requireImage(chosen);
    return chosen;
  }
  if (await engine.inspectImage(DEFAULT_DOCKER_IMAGE)) return DEFAULT_DOCKER_IMAGE;
  log(`${DEFAULT_DOCKER_IMAGE} is not built: using ${BENCH_IMAGE} from this host's programs (built once, reused while the host is unchanged)`);
  await buildImageFromHost({ tag: BENCH_IMAGE });
  return BENCH_IMAGE;
}

/** Wait until the provider's pool holds `n` ready containers (bounded: the bench fails rather than hang). */
async function poolReady(provider: DockerSandboxProvider, n: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (provider.poolNames().length < n) {
    if (Date.now() > deadline) throw new Error(`the warm pool did not reach ${n} containers within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Memory in use by a container, as `docker stats` shows it (usage minus the page cache). */
async function containerMemory(api: Docker, id: string): Promise<number> {
  const s = (await api.getContainer(id).stats({ stream: false })) as unknown as { memory_stats?: { usage?: number; stats?: Record<string, number> } };
  const usage = s.memory_stats?.usage ?? Number.NaN;
  const st = s.memory_stats?.stats ?? {};
  return usage - (st.total_inactive_file ?? st.inactive_file ?? st.cache ?? 0);
}

/** Run the Docker part, or say why it was skipped. */
export async function benchDocker(log: (m: string) => void): Promise<DockerFigures | DockerSkipped> {
  const engine = new DockerEngine();
  let version: string;
  try {
    version = (await engine.ping()).version;
  } catch (err) {
    return { skipped: (err as Error).message };
  }
  const image = await benchImage(engine, log);
  const coldRuns = envInt("BENCH_DOCKER_COLD", 5);
  const warmRuns = envInt("BENCH_DOCKER_WARM", 20);
  const replicas = 2;
  const quiet = () => undefined;
  const coldDir = mkdtempSync(path.join(os.tmpdir(), "dfbench-docker-cold-"));
  const warmDir = mkdtempSync(path.join(os.tmpdir(), "dfbench-docker-warm-"));
  const cold = new DockerSandboxProvider(parseSandboxConfig({ use: "docker", image, replicas: 0, idle_timeout: 0 }), { baseDir: coldDir, engine, log: quiet });
  const warm = new DockerSandboxProvider(parseSandboxConfig({ use: "docker", image, replicas, idle_timeout: 0 }), { baseDir: warmDir, engine, log: quiet });
  const out: DockerFigures = { image, version, cold: [], firstCommand: [], warm: [], reacquire: [], exec: [], execPaused: [], execWarm: { warm: 0, total: 0 }, plain: [], memory: [], leftBehind: 0 };
  try {
    // cold: no pool, every new thread creates and starts its container (one untimed first: the provider's start-up sweep)
    for (let i = 0; i <= coldRuns; i++) {
      const t = performance.now();
      const id = await cold.acquire(`cold-${i}`);
      const acquired = performance.now() - t;
      const first = await sandboxOnce(cold.get(id)!);
      if (i > 0) {
        out.cold.push(acquired);
        out.firstCommand.push(first);
      }
    }
    // per command: exec in a running container, interleaved with plain spawns
    const sb = cold.get(await cold.acquire("cold-1"))!;
    for (let i = 0; i < WARMUP; i++) {
      await plainOnce();
      await sandboxOnce(sb);
    }
    const stats = (sb as DockerSandbox).execStats;
    const before = { ...stats };
    for (let i = 0; i < RUNS; i++) {
      out.plain.push(await plainOnce());
      out.exec.push(await sandboxOnce(sb));
    }
    // The same after a pause (untimed) like the model's turn between two tool calls.
    for (let i = 0; i < RUNS; i++) {
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      out.execPaused.push(await sandboxOnce(sb));
    }
    out.execWarm = { warm: stats.warm - before.warm, total: stats.warm - before.warm + stats.cold - before.cold };
    // warm: a new thread takes a pre-created container; leases are kept so the pool refills to `replicas`
    const held: string[] = [];
    for (let i = 0; i <= warmRuns; i++) {
      await poolReady(warm, replicas);
      const t = performance.now();
      const id = await warm.acquire(`warm-${i}`);
      const took = performance.now() - t;
      await sandboxOnce(warm.get(id)!);
      if (i > 0) out.warm.push(took);
      held.push(id);
    }
    // re-acquire: a thread whose container is still up (no Docker call)
    for (let i = 0; i < warmRuns; i++) {
      await warm.release(held[0]);
      const t = performance.now();
      await warm.acquire(`warm-0`);
      out.reacquire.push(performance.now() - t);
    }
    // memory of each idle container (leased, nothing running but the keep-alive loop)
    const api = new Docker();
    for (const id of held) {
      const cid = warm.containerOf(id)?.containerId;
      if (cid) out.memory.push(await containerMemory(api, cid));
    }
  } finally {
    await cold.shutdown();
    await warm.shutdown();
    const left = [
      ...(await engine.listContainers({ [LABELS.instance]: cold.owner.instanceId })),
      ...(await engine.listContainers({ [LABELS.instance]: warm.owner.instanceId })),
    ];
    out.leftBehind = left.length;
    rmSync(coldDir, { recursive: true, force: true });
    rmSync(warmDir, { recursive: true, force: true });
  }
  return out;
}
