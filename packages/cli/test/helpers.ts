import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The real CLI entry. */
export const BIN = path.resolve(HERE, "../bin/deerflow.js");
/** Test agent module (scripted createAgent). */
export const SCRIPTED_AGENT = path.resolve(HERE, "fixtures/scripted-agent.ts");
/** DeerFlow's example config (shared fixtures, a sibling of the repo). */
export const EXAMPLE_CONFIG = path.resolve(HERE, "../../../../shared/fixtures/deerflow/config.example.yaml");
/** Whether DeerFlow's example config sits next to this checkout (CI: always; `.ci/run` fails otherwise). */
export const HAS_EXAMPLE_CONFIG = existsSync(EXAMPLE_CONFIG);
if (!HAS_EXAMPLE_CONFIG) console.warn(`[cli tests] SKIPPING tests that read DeerFlow's example config: ${EXAMPLE_CONFIG} is absent`);

/** Result of one CLI invocation. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh temp directory. */
export function tempDir(prefix = "df-cli-"): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** Environment without colours or inherited DeerFlow settings. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const k of Object.keys(env)) if (k.startsWith("DEER_FLOW_") || k.startsWith("DEERFLOW_") || k === "FORCE_COLOR") delete env[k];
  // `serve` would build the web UI on a clone that has none; CLI tests never need it.
  env.DEERFLOW_SKIP_WEB_BUILD = "1";
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Run `node bin/deerflow.js …` to completion. */
export function runCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`deerflow ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 50_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

/** Start a long-running CLI command and wait until stdout matches `ready`. */
export function startCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; ready: RegExp }): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`deerflow ${args.join(" ")} did not become ready\n${out}`));
    }, 50_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = out.match(opts.ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m, output: () => out });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`deerflow ${args.join(" ")} exited early (${code})\n${out}`));
    });
  });
}

/** Stop a child started by {@link startCli} and wait for it to exit. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** The pseudo-terminal driver (python3's pty module): answers prompts the way a person types. */
const PTY_RUN = path.resolve(HERE, "fixtures/pty-run.py");

/**
 * Run `deerflow …` on a pseudo-terminal (stdin, stdout and stderr are a TTY):
 * for each step, wait until the output shows `expect`, then type `send`.
 * The output is everything the terminal displayed, echo included.
 */
export function runCliOnTty(args: string[], steps: Array<{ expect: string; send: string }>, opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", [PTY_RUN, JSON.stringify(steps), process.execPath, BIN, ...args], { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
