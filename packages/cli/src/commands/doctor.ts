import { findBinary } from "@deerflow-ts/harness/sandbox";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { loadAppConfig, loadDotEnvFiles, resolveConfigPath, silentConfigLogger, substituteEnvVars } from "@deerflow-ts/harness/config";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { ModelCallError } from "@deerflow-ts/harness/errors";
import { humanMessage } from "@deerflow-ts/harness/messages";
import { createChatModel } from "@deerflow-ts/harness/models";
import { assembleConfiguredTools, toolEntriesOrDefault } from "@deerflow-ts/harness/agents";
import type { ToolConfigEntry } from "@deerflow-ts/harness/agents";
import { BWRAP_PROVIDER_NAMES, LocalSandboxProvider, parseSandboxConfig, probeBwrapDataDir, sandboxRunAs } from "@deerflow-ts/harness/sandbox";
import { describeNetworkPolicy } from "@deerflow-ts/harness/sandbox/network";
import { describeSandboxLimits } from "@deerflow-ts/harness/sandbox/limits";
import type { CgroupSupport } from "@deerflow-ts/harness/sandbox/limits";
import type { SandboxConfig } from "@deerflow-ts/harness/sandbox";
import { COMMON_HELP, commonOptions, describeError, parseCommand } from "../common";
import type { Terminal } from "../io";
import { authFindings } from "./doctor-auth";
import { configLoadFindings } from "./doctor-config-keys";
import { bashOffFinding } from "./doctor-bash-hint";
import { mcpFindings } from "./doctor-mcp";
import { serviceFindings } from "./doctor-services";
import { dockerFindings, sandboxUseFinding, selectsDocker } from "./doctor-docker";
import { provisionerFindings, selectsProvisioner } from "./doctor-provisioner";

/** Help of `deerflow doctor`. */
export const DOCTOR_HELP = `Usage: deerflow doctor [options]

Check the setup and print fixes: config.yaml validity, environment variables
the config refers to, model reachability (one tiny request per model), the tools
the agent gets (warns when it would have no file tools), bubblewrap availability
and whether it can isolate commands with the real data dir, the effective
per-sandbox limits (cgroups or rlimits) and network mode, sign-in (auth:
disabled, or enabled with the secret, the accounts and whether an admin
exists), PostgreSQL (database.backend: postgres: connects, server version,
migrations applied) and Redis (stream_bridge.type: redis: PING, version), and
data directory writability.
Exit code 0 when nothing is wrong (warnings allowed), 1 otherwise.

Options:
  --skip-model       do not contact the model provider
  --timeout SECONDS  model request timeout (default 15)
${COMMON_HELP}`;

/** One finding of the doctor. */
export interface Finding {
  check: string;
  level: "ok" | "warn" | "error";
  message: string;
  fix?: string;
}

/** Find an executable on PATH only (what the user's shell would find). */
export function whichOnPath(name: string, envPath = process.env.PATH ?? ""): string | undefined {
  return findBinary(name, { envPath, systemDirs: false });
}

function modelProblem(err: unknown, baseUrl: string | undefined): { message: string; fix: string } {
  const where = baseUrl ? ` at ${baseUrl}` : "";
  if (err instanceof ModelCallError) {
    switch (err.kind) {
      case "connection":
        return { message: `cannot reach the model server${where} (offline, or nothing listening): ${err.message}`, fix: "Check your network connection and the model's base_url in config.yaml." };
      case "timeout":
        return { message: `no answer from the model server${where} within the timeout`, fix: "Check your network and base_url, or raise --timeout." };
      case "auth":
        return { message: `the provider rejected the API key (${err.status ?? "auth"})`, fix: "Put a valid key in .env (deerflow init can rewrite it)." };
      case "quota":
        return { message: `the account has no quota left: ${err.message}`, fix: "Check billing with your provider." };
      default:
        return { message: `model request failed (${err.kind}): ${err.message}`, fix: "Check the model id and base_url in config.yaml." };
    }
  }
  const msg = (err as Error)?.message ?? String(err);
  if (/abort|timeout/i.test(msg)) return { message: `no answer from the model server${where} within the timeout`, fix: "Check your network and base_url, or raise --timeout." };
  return { message: `model request failed: ${msg}`, fix: "Check the model entry in config.yaml." };
}

async function pingModel(config: AppConfig, name: string, timeoutMs: number): Promise<void> {
  const { model } = createChatModel(config, name, { thinkingEnabled: false, logger: silentConfigLogger });
  const signal = AbortSignal.timeout(timeoutMs);
  const stream = model.stream({ messages: [humanMessage("Reply with the single word: ok")], tools: [], settings: { maxTokens: 5 }, signal });
  const timeout = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("timeout")), { once: true }));
  await Promise.race([
    (async () => {
      for await (const part of stream) if (part.type === "finish") break;
    })(),
    timeout,
  ]);
}

const FILE_TOOLS = ["ls", "read_file", "glob", "grep", "write_file", "str_replace"];

/**
 * What the agent would be offered from `tools:` (absent key = the default
 * sandbox tools): an error for entries that do not resolve, a warning when no
 * file tool is left or bash is configured but off.
 */
export function toolFindings(config: AppConfig, rawTools: unknown, dataDir: string): Finding[] {
  const entries = toolEntriesOrDefault(rawTools === undefined || rawTools === null ? undefined : ((config.tools ?? []) as ToolConfigEntry[]));
  const sandboxConfig = parseSandboxConfig(config.sandbox);
  const use = sandboxConfig.use?.trim() ?? "";
  // Mirrors the provider choice: bwrap always allows bash; local only with allow_host_bash; unset = bwrap when it works here.
  const isolated = BWRAP_PROVIDER_NAMES.has(use) || selectsDocker(use) || ((use === "" || use === "auto") && probeBwrapDataDir({ baseDir: dataDir, runAs: sandboxRunAs(sandboxConfig) }).ok);
  const bashAllowed = isolated || sandboxConfig.allow_host_bash;
  const warnings: string[] = [];
  let names: string[];
  try {
    const tools = assembleConfiguredTools(entries, {
      sandbox: { provider: new LocalSandboxProvider(sandboxConfig, { baseDir: dataDir }), config: sandboxConfig },
      bashAllowed,
      warn: (m) => warnings.push(m),
    });
    names = tools.map((t) => t.name);
  } catch (err) {
    return [{ check: "tools", level: "error", message: describeError(err).split("\nFix:")[0], fix: "Fix or remove that `tools:` entry (config.example.yaml lists the supported ones)." }];
  }
  const out: Finding[] = warnings.map((w) => ({ check: "tools", level: "warn" as const, message: w }));
  const files = names.filter((n) => FILE_TOOLS.includes(n));
  if (!files.length) {
    out.push({
      check: "tools",
      level: "warn",
      message: "the agent would have no file tools (read_file, write_file, …): every file request fails with \"Tool not found\"",
      fix: "Add DeerFlow's sandbox tool entries under `tools:` (see config.example.yaml), or delete the `tools:` key to get them by default (`deerflow init` writes them).",
    });
  } else {
    out.push({ check: "tools", level: "ok", message: `agent tools: ${names.join(", ")}${rawTools === undefined || rawTools === null ? " (default sandbox tools: no `tools:` key)" : ""}` });
  }
  if (!names.includes("bash") && entries.some((e) => e.name === "bash" || e.group === "bash")) {
    out.push(bashOffFinding(sandboxConfig, dataDir, whichOnPath("bwrap")));
  }
  return out;
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** A byte count as people read it (`2 GiB`, `512 MiB`). */
function bytes(n: number): string {
  if (n >= GIB && n % (GIB / 4) === 0) return `${n / GIB} GiB`;
  if (n >= MIB) return `${Math.round(n / MIB)} MiB`;
  return `${n} bytes`;
}

/**
 * The effective isolation of bwrap commands on this machine: which mechanism
 * enforces each per-sandbox limit (cgroups, rlimits, a sized tmpfs, a measured
 * quota) with its value, and the network mode with what it refuses.
 * Warns where a limit is not per sandbox (a flood in one thread could then
 * starve another) or not enforced at all.
 */
export function sandboxPolicyFindings(config: SandboxConfig, bwrapPath?: string, cgroups?: CgroupSupport): Finding[] {
  const out: Finding[] = [];
  const report = describeSandboxLimits(config, { runAs: sandboxRunAs(config), bwrapPath, cgroups });
  const values: Array<[string, { value: number; mechanism: string }, (v: number) => string]> = [
    ["processes", report.processes, String],
    ["memory", report.memory, bytes],
    ["cpu", report.cpu, (v) => `${v} core(s)`],
    ["/tmp", report.tmp, bytes],
    ["disk", report.diskQuota, bytes],
  ];
  const parts = values.map(([name, l, fmt]) => (l.mechanism === "none" || l.value === 0 ? `${name} unlimited` : `${name} ${fmt(l.value)} (${l.mechanism})`));
  const perSandbox = report.mechanism !== "rlimit";
  out.push({
    check: "sandbox-limits",
    level: perSandbox ? "ok" : "warn",
    message: `per-sandbox limits via ${report.mechanism}: ${parts.join(", ")}`,
    fix: perSandbox
      ? undefined
      : `no usable cgroup here (${report.notes.join("; ") || "none writable"}): process and memory limits are per process, and all sandboxes share one process limit. Run the service where it can create cgroups (root, or a delegated cgroup v2 subtree).`,
  });
  for (const [name, l] of values) {
    if (l.mechanism === "none" && l.value > 0) out.push({ check: "sandbox-limits", level: "warn", message: `${name} limit is configured but cannot be enforced here` });
  }
  const net = describeNetworkPolicy(config.network, "bwrap");
  out.push({ check: "sandbox-network", level: "ok", message: net.summary });
  return out;
}

/** Run every check and collect findings. */
export async function runDoctor(opts: { configPath?: string; dataDir: string; cwd: string; skipModel: boolean; timeoutMs: number }): Promise<Finding[]> {
  const findings: Finding[] = [];
  let config: AppConfig | undefined;
  let file: string | undefined;
  let rawSandboxUse: string | undefined;
  let rawTools: unknown;
  let rawJwtSecret: unknown;
  let env: Record<string, string | undefined> = { ...process.env };
  let envFiles: string[] = [];
  try {
    file = resolveConfigPath({ path: opts.configPath, cwd: opts.cwd });
    findings.push({ check: "config", level: "ok", message: `found ${file}` });
  } catch (err) {
    findings.push({ check: "config", level: "error", message: describeError(err).split("\nFix:")[0], fix: "Run `deerflow init` to create config.yaml, or pass --config PATH." });
  }
  if (file) {
    // Missing variables, each with its key path (read .env files the way the loader does).
    env = { ...process.env };
    envFiles = loadDotEnvFiles([path.join(opts.cwd, ".env"), path.join(path.dirname(file), ".env")], env);
    let raw: unknown;
    try {
      raw = parseYaml(readFileSync(file, "utf8"));
    } catch (err) {
      findings.push({ check: "config", level: "error", message: `${file} is not valid YAML: ${(err as Error).message.split("\n")[0]}`, fix: "Fix the syntax at the reported line." });
    }
    const missing = raw && typeof raw === "object" ? substituteEnvVars(raw, env).missing : [];
    const rawSandbox = raw && typeof raw === "object" ? (raw as { sandbox?: { use?: unknown } }).sandbox : undefined;
    if (rawSandbox && typeof rawSandbox.use === "string") rawSandboxUse = rawSandbox.use;
    if (raw && typeof raw === "object") rawTools = (raw as { tools?: unknown }).tools;
    if (raw && typeof raw === "object") rawJwtSecret = (raw as { auth?: { jwt_secret?: unknown } | null }).auth?.jwt_secret;
    for (const m of missing) {
      findings.push({
        check: "env",
        level: "error",
        message: `$${m.name} is not set (used by ${m.keyPath} in ${file})`,
        fix: `Add ${m.name}=... to ${path.join(path.dirname(file), ".env")} or export it in your shell.`,
      });
    }
    if (raw !== undefined && !missing.length) {
      try {
        const loaded = loadAppConfig({ path: file, cwd: opts.cwd, env, logger: silentConfigLogger });
        config = loaded.config;
        findings.push({ check: "config", level: "ok", message: `valid (config_version ${config.config_version ?? 0}, ${config.models.length} model(s))` });
        findings.push({ check: "env", level: "ok", message: "every referenced environment variable is set" });
        findings.push(...configLoadFindings(loaded));
        if (!config.models.length) findings.push({ check: "models", level: "error", message: "no models configured", fix: "Add an entry under `models:` (or run `deerflow init`)." });
      } catch (err) {
        findings.push({ check: "config", level: "error", message: describeError(err) });
      }
    }
  }
  if (config?.models.length) {
    for (const m of config.models) {
      if (opts.skipModel) {
        findings.push({ check: "model", level: "warn", message: `${m.name}: reachability not checked (--skip-model)` });
        continue;
      }
      try {
        await pingModel(config, m.name, opts.timeoutMs);
        findings.push({ check: "model", level: "ok", message: `${m.name} (${m.model}) answered` });
      } catch (err) {
        const p = modelProblem(err, m.base_url ?? undefined);
        findings.push({ check: "model", level: "error", message: `${m.name}: ${p.message}`, fix: p.fix });
      }
    }
  }
  if (config) findings.push(...toolFindings(config, rawTools, opts.dataDir));
  if (config) findings.push(...(await authFindings({ config, rawJwtSecret, env, dataDir: opts.dataDir, envFiles })));
  if (config) findings.push(...(await serviceFindings(config, env, opts.timeoutMs)));
  if (config) findings.push(...(await mcpFindings(config, { dataDir: opts.dataDir, timeoutMs: opts.timeoutMs, env })));
  // Sandbox: bubblewrap on PATH, and whether it can actually isolate here, binding from the real data dir.
  const sandboxUse = ((config?.sandbox as { use?: string } | undefined)?.use ?? rawSandboxUse ?? "").trim();
  const needsBwrap = BWRAP_PROVIDER_NAMES.has(sandboxUse);
  // A `use:` no provider implements fails `serve`/`run` at start-up: an error here too.
  const unsupportedUse = sandboxUseFinding(sandboxUse);
  if (unsupportedUse) findings.push(unsupportedUse);
  // The Docker tier: socket, permission, image, a hardened container (bubblewrap is not involved).
  const usesDocker = selectsDocker(sandboxUse);
  if (usesDocker) {
    let dockerConfig: SandboxConfig | undefined;
    try {
      dockerConfig = parseSandboxConfig(config?.sandbox ?? {});
    } catch {
      // an invalid sandbox section is already reported by the config check
    }
    if (dockerConfig) findings.push(...(await dockerFindings(dockerConfig, env, opts.timeoutMs)));
  }
  // `provisioner_url` selects the remote backend (with or without `use`): reachable, and the key accepted.
  let usesRemote = false;
  try {
    const remoteConfig = parseSandboxConfig(config?.sandbox ?? {});
    usesRemote = selectsProvisioner(remoteConfig);
    if (usesRemote) findings.push(...(await provisionerFindings(remoteConfig, env, opts.timeoutMs)));
  } catch {
    // an invalid sandbox section is already reported by the config check
  }
  const bwrap = whichOnPath("bwrap");
  if (usesDocker || usesRemote || unsupportedUse) {
    // bubblewrap is not the sandbox here: nothing to say about it
  } else if (!bwrap) {
    findings.push({
      check: "sandbox",
      level: needsBwrap ? "error" : "warn",
      message: `bubblewrap (bwrap) not found on PATH${needsBwrap ? `, but sandbox.use is '${sandboxUse}'` : "; commands would run without isolation"}`,
      fix: "Install it: apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap (Fedora).",
    });
  } else {
    const runAs = sandboxRunAs(parseSandboxConfig(config?.sandbox ?? {}));
    const probe = probeBwrapDataDir({ baseDir: opts.dataDir, runAs, bwrapPath: bwrap });
    const staged = probe.ok && probe.blocker ? ` (uid ${runAs?.uid} cannot enter ${probe.blocker}; binds are staged in a private mount namespace)` : "";
    if (probe.ok) findings.push({ check: "sandbox", level: "ok", message: `bubblewrap at ${bwrap} can isolate commands with the data dir ${opts.dataDir}${staged}` });
    else
      findings.push({
        check: "sandbox",
        level: needsBwrap ? "error" : "warn",
        message: `bubblewrap at ${bwrap} cannot start a sandbox with the data dir ${opts.dataDir}: ${probe.reason}`,
        fix: probe.blocker
          ? `Move the data dir (--data-dir) out of ${probe.blocker}, or install util-linux (unshare, mount).`
          : "Enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / AppArmor userns policy) or run as root.",
      });
  }
  if (sandboxUse && !needsBwrap && !usesDocker && !usesRemote && !unsupportedUse && sandboxUse !== "auto") findings.push({ check: "sandbox", level: "warn", message: `sandbox.use is '${sandboxUse}': agent commands run on the host without isolation`, fix: "Set sandbox.use: bwrap to isolate them." });
  if (bwrap && !usesRemote && (needsBwrap || !sandboxUse || sandboxUse === "auto")) {
    let sandboxConfig: SandboxConfig | undefined;
    try {
      sandboxConfig = parseSandboxConfig(config?.sandbox ?? {});
    } catch {
      // an invalid sandbox section is already reported by the config check
    }
    if (sandboxConfig) findings.push(...sandboxPolicyFindings(sandboxConfig, bwrap));
  }
  // Data directory.
  try {
    mkdirSync(opts.dataDir, { recursive: true });
    const probe = path.join(opts.dataDir, `.doctor-${process.pid}`);
    writeFileSync(probe, "ok");
    rmSync(probe);
    findings.push({ check: "data-dir", level: "ok", message: `${opts.dataDir} is writable` });
  } catch (err) {
    findings.push({ check: "data-dir", level: "error", message: `${opts.dataDir} is not writable: ${(err as Error).message}`, fix: "Pick another directory with --data-dir, or fix its permissions." });
  }
  return findings;
}

/** `deerflow doctor`. */
export async function doctorCommand(argv: string[], term: Terminal): Promise<number> {
  const { values } = parseCommand("doctor", argv, { "skip-model": { type: "boolean" }, timeout: { type: "string" } });
  if (values.help) {
    term.line(DOCTOR_HELP);
    return 0;
  }
  const common = commonOptions(values);
  const timeoutMs = Math.max(1, Number(values.timeout ?? 15)) * 1000;
  const findings = await runDoctor({ ...common, skipModel: !!values["skip-model"], timeoutMs });
  term.line(term.style("bold", "DeerFlow doctor"));
  for (const f of findings) {
    const mark = f.level === "ok" ? term.style("green", "✓") : f.level === "warn" ? term.style("yellow", "!") : term.style("red", "✗");
    term.line(`${mark} ${f.check}: ${f.message}`);
    if (f.fix) term.line(`    ${term.style("gray", `fix: ${f.fix}`)}`);
  }
  const errors = findings.filter((f) => f.level === "error").length;
  const warns = findings.filter((f) => f.level === "warn").length;
  term.line(errors ? term.style("red", `${errors} problem(s), ${warns} warning(s)`) : term.style("green", `No problems found${warns ? ` (${warns} warning(s))` : ""}.`));
  return errors ? 1 : 0;
}
