/**
 * The deployment the red-team tests attack: real `deerflow serve` processes
 * on one fresh PostgreSQL database and one Redis, sign-in on, one scripted
 * model server, and helpers to sign users in on any process.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, HttpScriptStep, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { SignedIn } from "../../helpers/auth-session";
import { scaleOutConfigYaml, startServe } from "../helpers/serve-process";
import type { ScaleOutConfig, ServeProcess } from "../helpers/serve-process";
import { scriptedRouter } from "../helpers/scripted-router";

/** The session secret of the red-team deployments (config.yaml; ≥ 32 characters). */
export const RED_TEAM_JWT_SECRET = "red-team-jwt-secret-0123456789abcdef0123456";
export const PASSWORD = "correct-horse-battery-staple";

/** Options of {@link startDeployment}. */
export interface DeploymentOptions extends Partial<Omit<ScaleOutConfig, "llmUrl">> {
  /** How many processes (default 2). */
  processes?: number;
  /** Sign-in on (default true). */
  auth?: boolean;
  /** The model's steps (default: the scale-out router). */
  step?: HttpScriptStep;
  /** Extra config.yaml lines. */
  extraYaml?: string;
  /** Extra environment of every process. */
  env?: NodeJS.ProcessEnv;
  /** A PostgreSQL URL to use instead of a fresh database on the test server. */
  postgresUrl?: string;
}

/** A running deployment. */
export interface Deployment {
  procs: ServeProcess[];
  llm: ScriptedLLMServer;
  db: FreshDatabase | undefined;
  root: string;
  dataDir: string;
  configPath: string;
  /** Start one more process on the same config and data dir. */
  addProcess(name: string): Promise<ServeProcess>;
  /** Everything every process printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** config.yaml of a deployment: the scale-out config plus sign-in. */
export function deploymentYaml(c: ScaleOutConfig & { auth?: boolean; extraYaml?: string }): string {
  let yaml = scaleOutConfigYaml(c);
  if (c.auth !== false) yaml += `auth:\n  enabled: true\n  jwt_secret: ${RED_TEAM_JWT_SECRET}\n`;
  if (c.extraYaml) yaml += c.extraYaml.endsWith("\n") ? c.extraYaml : `${c.extraYaml}\n`;
  return yaml;
}

/** Start the processes (at the same moment, on an empty database). */
export async function startDeployment(opts: DeploymentOptions = {}): Promise<Deployment> {
  const pgServer = process.env.DEERFLOW_TEST_POSTGRES_URL!;
  const redis = opts.redisUrl ?? process.env.DEERFLOW_TEST_REDIS_URL!;
  const db = opts.postgresUrl ? undefined : await freshPostgresDatabase(pgServer, "redteam");
  const llm = await startScriptedLLMServer({ script: [opts.step ?? scriptedRouter().step], onExhausted: "repeat-last" });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-redteam-"));
  const dataDir = path.join(root, "data");
  const configPath = path.join(root, "config.yaml");
  fs.writeFileSync(
    configPath,
    deploymentYaml({
      llmUrl: `${llm.url}/v1`,
      postgresUrl: opts.postgresUrl ?? db!.url,
      redisUrl: redis,
      leaseSeconds: opts.leaseSeconds ?? 3,
      graceSeconds: opts.graceSeconds ?? 1,
      queueMaxsize: opts.queueMaxsize,
      auth: opts.auth,
      extraYaml: opts.extraYaml,
    }),
  );
  const procs: ServeProcess[] = [];
  const stopAll = async () => {
    for (const p of procs) await p.stop();
    await llm.close();
    await db?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const n = opts.processes ?? 2;
    procs.push(...(await Promise.all(Array.from({ length: n }, (_, i) => startServe({ name: `P${i + 1}`, configPath, dataDir, env: opts.env })))));
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    procs,
    llm,
    db,
    root,
    dataDir,
    configPath,
    async addProcess(name: string) {
      const p = await startServe({ name, configPath, dataDir, env: opts.env });
      procs.push(p);
      return p;
    },
    output: () => procs.map((p) => `--- ${p.name} (pid ${p.pid})\n${p.output}`).join("\n"),
    stop: stopAll,
  };
}

/** A signed-in user's session on another process (the same cookies: sessions are valid on every process). */
export function on(user: SignedIn, proc: ServeProcess): SignedIn {
  return new SignedIn(proc.api, user.jar);
}

/** The request headers of a user (cookie, CSRF on writes) for raw fetches and SSE. */
export function authHeaders(user: SignedIn, method = "GET"): Record<string, string> {
  return user.headers(method);
}
