/**
 * Test fixture: DeerFlow's own Next.js frontend (a production build made outside the repository, see
 * docs/testing.md) in front of our gateway started the way a user starts it (`deerflow serve` in a child
 * process), over the scripted OpenAI-compatible LLM server. Three real processes, all on 127.0.0.1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { HttpScriptStep, ScriptedLLMServer } from "@deerflow-ts/harness/testing";

/** The repository root. */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const CLI = path.join(REPO_ROOT, "packages/cli/bin/deerflow.js");

/** Why a frontend directory cannot be used, or undefined when it holds a production build. */
export function frontendBuildProblem(dir: string | undefined): string | undefined {
  if (!dir) return "DEERFLOW_FRONTEND_DIR is not set (build DeerFlow's frontend as docs/testing.md describes, then point it there)";
  if (!fs.existsSync(path.join(dir, ".next", "BUILD_ID"))) return `${dir} has no production build (.next/BUILD_ID missing: run \`next build\` there)`;
  if (!fs.existsSync(path.join(dir, "node_modules", ".bin", "next"))) return `${dir}/node_modules/.bin/next is missing (run \`pnpm install\` there)`;
  return undefined;
}

/**
 * The gateway origin the build's `/api` rewrites point at. Next.js bakes rewrites into
 * `.next/routes-manifest.json` at build time (`DEER_FLOW_INTERNAL_GATEWAY_BASE_URL`), so our gateway must
 * listen exactly there.
 */
export function builtGatewayOrigin(frontendDir: string): URL {
  const manifest = JSON.parse(fs.readFileSync(path.join(frontendDir, ".next", "routes-manifest.json"), "utf8")) as {
    rewrites?: { afterFiles?: Array<{ source: string; destination: string }> } | Array<{ source: string; destination: string }>;
  };
  const rules = Array.isArray(manifest.rewrites) ? manifest.rewrites : (manifest.rewrites?.afterFiles ?? []);
  const catchAll = rules.find((r) => r.source === "/api/:path*");
  if (!catchAll) throw new Error(`${frontendDir}: the build has no /api/:path* rewrite (was it built with NEXT_PUBLIC_BACKEND_BASE_URL set?)`);
  const url = new URL(catchAll.destination.replace("/api/:path*", ""));
  if (url.hostname !== "127.0.0.1" && url.hostname !== "localhost") {
    throw new Error(`${frontendDir}: the build sends /api to ${url.origin}, not to loopback; rebuild with DEER_FLOW_INTERNAL_GATEWAY_BASE_URL=http://127.0.0.1:8001`);
  }
  return url;
}

/** Resolves when nothing listens on 127.0.0.1:`port`, else rejects naming the port. */
async function assertPortFree(port: number, why: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (err) => reject(new Error(`127.0.0.1:${port} is in use (${(err as NodeJS.ErrnoException).code}); ${why}`)));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

/** A free loopback port (the OS picks it; `next start` has no port-0 mode that reports the chosen port). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

/** A child process whose output is kept, with a wait for a line of it. */
class Child {
  private out = "";
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    const onData = (chunk: Buffer) => {
      this.out += chunk.toString("utf8");
      for (const w of this.waiters) w();
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.once("exit", (code, signal) => {
      this.exited = { code, signal };
      for (const w of this.waiters) w();
    });
  }

  /** Everything it printed so far (stdout and stderr interleaved). */
  get output(): string {
    return this.out;
  }

  /** Resolves with the first match of `pattern` in its output; rejects when it exits or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      const check = () => {
        const m = pattern.exec(this.out);
        if (m) return done(() => resolve(m));
        if (this.exited) done(() => reject(new Error(`${this.name} exited (${this.exited?.code ?? this.exited?.signal}) before printing ${pattern}:\n${this.tail()}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${this.name} did not print ${pattern} within ${timeoutMs} ms:\n${this.tail()}`))), timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  tail(chars = 4000): string {
    return this.out.slice(-chars);
  }

  /** SIGTERM to its process group, SIGKILL when it has not exited after 10 s. */
  async stop(): Promise<void> {
    if (this.exited || this.proc.pid === undefined) return;
    const pid = this.proc.pid;
    const gone = new Promise<void>((resolve) => this.proc.once("exit", () => resolve()));
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

/** Options of {@link startFrontendStack}. */
export interface FrontendStackOptions {
  /** The directory of DeerFlow's built frontend. */
  frontendDir: string;
  /** The YAML of config.yaml; `${LLM_URL}` is replaced by the scripted LLM server's `/v1` URL. */
  configYaml: string;
  /** The scripted LLM's steps (default: its echo model, "You said: …"). */
  script?: HttpScriptStep[];
}

/** The running processes. */
export interface FrontendStack {
  /** DeerFlow's frontend, `http://127.0.0.1:PORT`. */
  appUrl: string;
  /** Our gateway, at the origin the frontend build was made for. */
  gatewayUrl: string;
  /** The gateway's `--data-dir`. */
  dataDir: string;
  llm: ScriptedLLMServer;
  gateway: Child;
  next: Child;
  close(): Promise<void>;
}

/**
 * Start the scripted LLM server, `deerflow serve` on the port the frontend build points at, and
 * `next start` of the build on a free port, each waited for by its own "ready" line. Auth mode is what
 * config.yaml says: `DEER_FLOW_AUTH_DISABLED` is removed from both children's environment.
 */
export async function startFrontendStack(options: FrontendStackOptions): Promise<FrontendStack> {
  const gatewayOrigin = builtGatewayOrigin(options.frontendDir);
  const gatewayPort = Number(gatewayOrigin.port || 80);
  await assertPortFree(gatewayPort, `the frontend build in ${options.frontendDir} sends /api to ${gatewayOrigin.origin} (baked in at build time), so the gateway must listen there`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-frontend-"));
  const dataDir = path.join(root, "data");
  fs.mkdirSync(dataDir);
  const llm = await startScriptedLLMServer({ script: options.script, onExhausted: options.script ? "echo" : undefined });
  const configPath = path.join(root, "config.yaml");
  fs.writeFileSync(configPath, options.configYaml.replaceAll("${LLM_URL}", `${llm.url}/v1`));
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NO_COLOR: "1", FORCE_COLOR: "0" };
  delete env.DEER_FLOW_AUTH_DISABLED;
  delete env.DEER_FLOW_JWT_SECRET;
  const children: Child[] = [];
  const close = async () => {
    for (const c of children.reverse()) await c.stop();
    await llm.close();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const gateway = new Child(
      "deerflow serve",
      spawn(process.execPath, [CLI, "serve", "--config", configPath, "--data-dir", dataDir, "--port", String(gatewayPort), "--no-web-build"], {
        cwd: root,
        env: { ...env, DEERFLOW_SKIP_WEB_BUILD: "1" },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    children.push(gateway);
    await gateway.waitFor(/DeerFlow is running at (http:\/\/\S+)/, 60_000);
    const appPort = await freePort();
    const next = new Child(
      "next start",
      spawn(path.join(options.frontendDir, "node_modules", ".bin", "next"), ["start", "-p", String(appPort), "-H", "127.0.0.1"], {
        cwd: options.frontendDir,
        env: { ...env, DEER_FLOW_INTERNAL_GATEWAY_BASE_URL: gatewayOrigin.origin, NODE_ENV: "production" },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    children.push(next);
    await next.waitFor(/Ready in/, 60_000);
    return { appUrl: `http://127.0.0.1:${appPort}`, gatewayUrl: gatewayOrigin.origin, dataDir, llm, gateway, next, close };
  } catch (err) {
    await close();
    throw err;
  }
}
