/**
 * `deerflow serve` processes for the scale-out tests and the scale bench:
 * the real CLI (`node packages/cli/bin/deerflow.js serve`) with one
 * config.yaml and one shared `--data-dir`, each waited for by the line it
 * prints once listening. PostgreSQL and Redis come from the caller.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../..");
const CLI = path.join(REPO_ROOT, "packages/cli/bin/deerflow.js");

/** What the config of a scale-out deployment says. */
export interface ScaleOutConfig {
  /** The scripted OpenAI-compatible server's `/v1` URL. */
  llmUrl: string;
  /** PostgreSQL database URL (absent: SQLite under the data dir). */
  postgresUrl?: string;
  /** Redis URL (absent: the in-memory bridge). */
  redisUrl?: string;
  /** `run_ownership.lease_seconds` (short in tests so a takeover happens within seconds). */
  leaseSeconds?: number;
  graceSeconds?: number;
  /** `stream_bridge.queue_maxsize`. */
  queueMaxsize?: number;
}

/** config.yaml for {@link ScaleOutConfig}: the scripted model, no title/memory calls, local sandbox, the `ls` tool only. */
export function scaleOutConfigYaml(c: ScaleOutConfig): string {
  const lines = [
    "config_version: 34",
    "models:",
    "  - name: scripted",
    "    use: openai-compatible",
    "    model: scripted",
    `    base_url: ${c.llmUrl}`,
    "    api_key: test",
    "title:",
    "  enabled: false",
    "memory:",
    "  enabled: false",
    "sandbox:",
    "  use: local",
    // one harmless tool, so a run has a committed step (tool call + result) between two model calls
    "tools:",
    "  - name: ls",
    "    group: file:read",
    "    use: deerflow.sandbox.tools:ls_tool",
  ];
  if (c.postgresUrl) lines.push("database:", "  backend: postgres", `  postgres_url: ${c.postgresUrl}`);
  else lines.push("database:", "  backend: sqlite");
  if (c.redisUrl) lines.push("stream_bridge:", "  type: redis", `  redis_url: ${c.redisUrl}`, `  queue_maxsize: ${c.queueMaxsize ?? 256}`);
  lines.push("run_ownership:", `  lease_seconds: ${c.leaseSeconds ?? 30}`, `  grace_seconds: ${c.graceSeconds ?? 10}`, "  heartbeat_enabled: true");
  return `${lines.join("\n")}\n`;
}

/** A running `deerflow serve`. */
export class ServeProcess {
  private out = "";
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly waiters = new Set<() => void>();
  /** Base URL once listening (`http://127.0.0.1:PORT`). */
  url = "";

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    const onData = (chunk: Buffer) => {
      this.out += chunk.toString("utf8");
      if (this.out.length > 200_000) this.out = this.out.slice(-100_000);
      for (const w of [...this.waiters]) w();
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.once("exit", (code, signal) => {
      this.exitInfo = { code, signal };
      for (const w of [...this.waiters]) w();
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** `{baseUrl}/api`. */
  get api(): string {
    return `${this.url}/api`;
  }

  get output(): string {
    return this.out;
  }

  get exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** Resolves with the first match of `pattern` in its output; rejects when it exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const finish = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      const check = () => {
        const m = pattern.exec(this.out);
        if (m) return finish(() => resolve(m));
        if (this.exitInfo) finish(() => reject(new Error(`${this.name} exited (${this.exitInfo?.code ?? this.exitInfo?.signal}) before printing ${pattern}:\n${this.out.slice(-3000)}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`${this.name} did not print ${pattern} within ${timeoutMs} ms:\n${this.out.slice(-3000)}`))), timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once the process exited. */
  waitExit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.exitInfo) return Promise.resolve(this.exitInfo);
    return new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
  }

  /** SIGKILL this process only (a crash: no shutdown code runs) and wait for it to be gone. */
  async kill9(): Promise<void> {
    if (this.exitInfo) return;
    const gone = this.waitExit();
    process.kill(this.pid, "SIGKILL");
    await gone;
  }

  /** CPU time (user + system, ms) of this process and its children so far, from /proc (Linux). */
  cpuMs(pids: number[] = [this.pid]): number {
    let total = 0;
    const tick = 1000 / 100; // USER_HZ is 100 on Linux
    for (const pid of pids) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        // utime, stime are fields 14 and 15 of the whole line: 12 and 13 after the comm field
        total += (Number(fields[11]) + Number(fields[12])) * tick;
      } catch {
        // gone
      }
    }
    return total;
  }

  /** SIGTERM its process group (workers included), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.exitInfo || this.proc.pid === undefined) return;
    const pid = this.proc.pid;
    const gone = this.waitExit();
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-pid, s);
      } catch {
        // already gone
      }
    };
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

/** Options of {@link startServe}. */
export interface StartServeOptions {
  name: string;
  configPath: string;
  dataDir: string;
  /** Extra CLI arguments (`--workers 2`). */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Resolve before it listens (refusal tests wait for the exit themselves). */
  noWait?: boolean;
}

/** Start `deerflow serve --port 0` and wait for "DeerFlow is running at URL". */
export async function startServe(opts: StartServeOptions): Promise<ServeProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", DEERFLOW_SKIP_WEB_BUILD: "1", ...opts.env };
  delete env.DEER_FLOW_AUTH_DISABLED;
  const proc = spawn(process.execPath, [CLI, "serve", "--config", opts.configPath, "--data-dir", opts.dataDir, "--port", "0", "--no-web-build", ...(opts.args ?? [])], {
    cwd: path.dirname(opts.configPath),
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const p = new ServeProcess(opts.name, proc);
  if (opts.noWait) return p;
  try {
    const m = await p.waitFor(/DeerFlow is running at (http:\/\/\S+)/, 90_000);
    p.url = m[1]!;
  } catch (err) {
    await p.stop();
    throw err;
  }
  return p;
}
