import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_TOOL_ENTRIES } from "@deerflow-ts/harness/agents";
import type { ToolConfigEntry } from "@deerflow-ts/harness/agents";
import { CONFIG_VERSION } from "@deerflow-ts/harness/config";
import { parseSandboxConfig, probeBwrapDataDir, sandboxRunAs } from "@deerflow-ts/harness/sandbox";
import type { BwrapProbe } from "@deerflow-ts/harness/sandbox";
import { COMMON_HELP, parseCommand, UsageError } from "../common";
import { LineInput } from "../io";
import type { Terminal } from "../io";
import { AUTH_EXPLANATION, AUTH_QUESTION, DEFAULT_SERVE_URL, dotEnvHasValue, generateJwtSecret, JWT_SECRET_VAR, offerFirstAdmin, renderAuthSection, yesNo } from "./init-auth";

/** Help of `deerflow init`. */
export const INIT_HELP = `Usage: deerflow init [options]

Setup wizard: choose a model provider, enter the API key (or base URL) and the
sandbox mode. Writes config.yaml (which refers to the key as $VAR) with the
standard tool set (web search/fetch, file tools, bash) and .env (which holds
the key). Existing files are never overwritten without asking.

The default sandbox is bwrap when bubblewrap can isolate commands on this
machine with the data dir (it is tried for real), else local with bash off.

Every question can be answered by a flag (for scripts) or from stdin, one line
per question.

Options:
  --provider P       openai | anthropic | deepseek | openai-compatible
  --api-key KEY      API key (stored only in .env)
  --base-url URL     base URL (openai-compatible: e.g. http://localhost:11434/v1 for Ollama)
  --model ID         the provider's model id
  --sandbox MODE     local (no isolation, bash off) | bwrap (bubblewrap isolation, Linux)
  --dir DIR          where to write config.yaml and .env (default: the working directory)
  --yes              accept defaults for every unanswered question (never overwrites; see --force)
  --force            overwrite existing config.yaml / .env without asking
  --agents-api on|off  serve the custom-agents API (/api/agents: create and edit agent
                     souls over HTTP; for a local setup only, default off)
  --auth, --no-auth  require sign-in (users and passwords) or not (default: no, fine
                     while the server listens on 127.0.0.1 only). With --auth, init
                     writes \`auth: {enabled: true, jwt_secret: $DEER_FLOW_JWT_SECRET}\`,
                     generates that secret into .env (kept when it exists) and offers
                     to create the first admin (else open /setup after \`deerflow serve\`)
  --admin-email EMAIL  with --auth: create this first admin; its password is asked at a
                     hidden prompt, or read as the next stdin line without a terminal
                     (never as an argument)
${COMMON_HELP}`;

interface ProviderPreset {
  label: string;
  use: string;
  model: string;
  envVar: string;
  baseUrl?: string;
  needsKey: boolean;
}

/** Providers offered by the wizard. */
export const PROVIDERS: Record<string, ProviderPreset> = {
  openai: { label: "OpenAI", use: "langchain_openai:ChatOpenAI", model: "gpt-4.1-mini", envVar: "OPENAI_API_KEY", needsKey: true },
  anthropic: { label: "Anthropic", use: "langchain_anthropic:ChatAnthropic", model: "claude-sonnet-4-5", envVar: "ANTHROPIC_API_KEY", needsKey: true },
  deepseek: { label: "DeepSeek", use: "deepseek", model: "deepseek-chat", envVar: "DEEPSEEK_API_KEY", baseUrl: "https://api.deepseek.com/v1", needsKey: true },
  "openai-compatible": {
    label: "OpenAI-compatible (Ollama, vLLM, …)",
    use: "openai-compatible",
    model: "llama3.1",
    envVar: "OPENAI_COMPATIBLE_API_KEY",
    baseUrl: "http://localhost:11434/v1",
    needsKey: false,
  },
};

const SANDBOXES: Record<string, string> = {
  local: "deerflow.sandbox.local:LocalSandboxProvider",
  bwrap: "bwrap",
};

/** Answers of the wizard. */
export interface InitAnswers {
  provider: string;
  apiKey: string;
  baseUrl?: string;
  model: string;
  sandbox: string;
  /** Serve the custom-agents API (`agents_api.enabled`). */
  agentsApi?: boolean;
  /** Require sign-in (`auth.enabled`, secret from `$DEER_FLOW_JWT_SECRET`). */
  auth?: boolean;
}

function yamlString(s: string): string {
  return JSON.stringify(s);
}

/** DeerFlow's tool groups (a custom agent's `tool_groups` selects among them). */
export const INIT_TOOL_GROUPS = ["web", "file:read", "file:write", "bash", "browser"];

/**
 * The `tools:` entries `init` writes: the web tools, then the default sandbox
 * tools (`bash` is dropped at run time when the sandbox does not allow it).
 */
export const INIT_TOOL_ENTRIES: readonly ToolConfigEntry[] = [
  { name: "web_search", group: "web", use: "deerflow.community.ddg_search.tools:web_search_tool", max_results: 5 },
  { name: "web_fetch", group: "web", use: "web:fetch" },
  ...DEFAULT_TOOL_ENTRIES,
];

function renderTools(): string[] {
  const lines = ["tool_groups:", ...INIT_TOOL_GROUPS.map((g) => `  - name: ${yamlString(g)}`), "", "tools:"];
  for (const entry of INIT_TOOL_ENTRIES) {
    const { name, group, use, ...extra } = entry;
    lines.push(`  - name: ${name}`, `    group: ${yamlString(group ?? "")}`, `    use: ${yamlString(use)}`);
    for (const [k, v] of Object.entries(extra)) lines.push(`    ${k}: ${JSON.stringify(v)}`);
  }
  return lines;
}

/** The config.yaml text the wizard writes (keys only as `$VAR` references). */
export function renderConfig(a: InitAnswers): string {
  const p = PROVIDERS[a.provider];
  const lines = [
    "# DeerFlow configuration, written by `deerflow init`.",
    "# Secrets live in .env; values starting with $ are read from the environment.",
    "# `deerflow config upgrade` adds the remaining default sections; `deerflow doctor` checks this file.",
    `config_version: ${CONFIG_VERSION}`,
    "",
    "models:",
    `  - name: ${yamlString(a.model)}`,
    `    display_name: ${yamlString(`${a.model} (${p.label})`)}`,
    `    use: ${yamlString(p.use)}`,
    `    model: ${yamlString(a.model)}`,
    `    api_key: $${p.envVar}`,
  ];
  if (a.baseUrl) lines.push(`    base_url: ${yamlString(a.baseUrl)}`);
  lines.push("", ...renderTools(), "", "sandbox:", `  use: ${yamlString(SANDBOXES[a.sandbox])}`);
  if (a.sandbox === "local") {
    lines.push("  # The local sandbox does not isolate commands, so bash stays off. Use bwrap to get it.", "  allow_host_bash: false");
  }
  if (a.agentsApi) {
    lines.push("", "# The custom-agents API rewrites agent souls over HTTP: keep it for a local, single-user setup.", "agents_api:", "  enabled: true");
  }
  if (a.auth) lines.push(...renderAuthSection());
  lines.push("");
  return lines.join("\n");
}

/** Merge `KEY=value` into existing .env text (replacing an existing KEY line). */
export function mergeDotEnv(existing: string, key: string, value: string): string {
  const line = `${key}=${/[\s#"'$]/.test(value) ? JSON.stringify(value) : value}`;
  const lines = existing ? existing.replace(/\n$/, "").split("\n") : [];
  const i = lines.findIndex((l) => l.replace(/^export\s+/, "").startsWith(`${key}=`));
  if (i >= 0) lines[i] = line;
  else lines.push(line);
  return `${lines.join("\n")}\n`;
}

/** Whether bubblewrap can isolate commands here, tried against the data dir the agent will use. */
export function probeInitSandbox(dataDir: string): BwrapProbe {
  return probeBwrapDataDir({ baseDir: dataDir, runAs: sandboxRunAs(parseSandboxConfig({})) });
}

/** The notice printed after the sandbox choice (what the agent can do, and how to get bash). */
export function sandboxNotice(sandbox: string, probe: BwrapProbe): string {
  if (sandbox === "bwrap") {
    return probe.ok
      ? "Sandbox: bubblewrap isolates commands on this machine, so the agent has bash."
      : `Sandbox: bwrap was chosen, but bubblewrap cannot isolate commands here yet: ${probe.reason}. Run \`deerflow doctor\` after fixing it.`;
  }
  const why = probe.ok ? "you chose local" : `bubblewrap cannot isolate commands here (${probe.reason})`;
  const step = probe.bwrapPath
    ? "make bubblewrap work here (`deerflow doctor` shows why it does not)"
    : "install bubblewrap (apt-get install bubblewrap / dnf install bubblewrap)";
  return (
    `Sandbox: local (${why}). Commands would run unisolated on this machine, so bash is OFF; the file tools work.\n` +
    `  To get bash: ${probe.ok ? "" : `${step}, then `}set \`sandbox.use: bwrap\` in config.yaml (or rerun \`deerflow init --sandbox bwrap\`).`
  );
}

/** `deerflow init`. */
export async function initCommand(argv: string[], term: Terminal): Promise<number> {
  const { values } = parseCommand("init", argv, {
    provider: { type: "string" },
    "api-key": { type: "string" },
    "base-url": { type: "string" },
    model: { type: "string" },
    sandbox: { type: "string" },
    dir: { type: "string" },
    yes: { type: "boolean", short: "y" },
    force: { type: "boolean" },
    "agents-api": { type: "string" },
    auth: { type: "boolean" },
    "no-auth": { type: "boolean" },
    "admin-email": { type: "string" },
  });
  if (values.help) {
    term.line(INIT_HELP);
    return 0;
  }
  if (values.auth && values["no-auth"]) throw new UsageError("--auth and --no-auth contradict each other.", "init");
  if (values["admin-email"] !== undefined && values["no-auth"]) throw new UsageError("--admin-email needs sign-in (--auth).", "init");
  const dir = path.resolve(values.dir ?? (values.config ? path.dirname(values.config) : process.cwd()));
  const configFile = values.config ? path.resolve(values.config) : path.join(dir, "config.yaml");
  const envFile = path.join(path.dirname(configFile), ".env");
  const input = new LineInput();
  const ask = async (question: string, def: string | undefined, flag: string | undefined): Promise<string> => {
    if (flag !== undefined) return flag;
    if (values.yes && def !== undefined) return def;
    const answer = await input.ask(`${question}${def ? term.style("gray", ` [${def}]`) : ""}: `);
    const v = (answer ?? "").trim();
    if (!v && def === undefined) throw new UsageError(`${question}: an answer is required (or pass it as a flag).`, "init");
    return v || (def ?? "");
  };
  const confirm = async (question: string): Promise<boolean> => {
    if (values.force) return true;
    if (values.yes) return false;
    const answer = ((await input.ask(`${question} [y/N]: `)) ?? "").trim().toLowerCase();
    return answer === "y" || answer === "yes";
  };
  try {
    term.line(term.style("bold", "DeerFlow setup"));
    const keys = Object.keys(PROVIDERS);
    if (values.provider === undefined) keys.forEach((k, i) => term.line(`  ${i + 1}. ${PROVIDERS[k].label} (${k})`));
    const rawProvider = await ask("Provider", "openai", values.provider);
    const provider = /^\d+$/.test(rawProvider) ? keys[Number(rawProvider) - 1] : rawProvider;
    if (!provider || !PROVIDERS[provider]) throw new UsageError(`unknown provider '${rawProvider}'; choose one of ${keys.join(", ")}`, "init");
    const preset = PROVIDERS[provider];
    const baseUrl = preset.baseUrl ? await ask("Base URL", preset.baseUrl, values["base-url"]) : values["base-url"];
    const model = await ask("Model", preset.model, values.model);
    const apiKey = await ask(preset.needsKey ? `API key (${preset.envVar})` : `API key (${preset.envVar}, optional)`, preset.needsKey ? undefined : "", values["api-key"]);
    if (preset.needsKey && !apiKey) throw new UsageError(`${preset.label} needs an API key (--api-key).`, "init");
    const dataDir = path.resolve(values["data-dir"] ?? path.join(path.dirname(configFile), ".deer-flow"));
    const probe = probeInitSandbox(dataDir);
    const sandbox = await ask("Sandbox (local | bwrap)", probe.ok ? "bwrap" : "local", values.sandbox);
    if (!SANDBOXES[sandbox]) throw new UsageError(`unknown sandbox mode '${sandbox}'; choose local or bwrap`, "init");
    const agentsRaw = (await ask("Enable the custom-agents API (create and edit agents from the UI; local use only) (on | off)", "off", values["agents-api"])).toLowerCase();
    if (!["on", "off", "yes", "no", "true", "false"].includes(agentsRaw)) throw new UsageError(`--agents-api must be on or off, got '${agentsRaw}'`, "init");
    const authFlag = values.auth || values["admin-email"] !== undefined ? "yes" : values["no-auth"] ? "no" : undefined;
    if (authFlag === undefined && !values.yes) term.line(term.style("gray", AUTH_EXPLANATION));
    const auth = yesNo(await ask(AUTH_QUESTION, "no", authFlag), "Require sign-in");
    const answers: InitAnswers = { provider, apiKey, baseUrl: baseUrl || undefined, model, sandbox, agentsApi: ["on", "yes", "true"].includes(agentsRaw), auth };

    mkdirSync(path.dirname(configFile), { recursive: true });
    let wroteConfig = false;
    if (existsSync(configFile) && !(await confirm(`${configFile} exists. Overwrite?`))) {
      term.line(`Kept the existing ${configFile}.`);
    } else {
      writeFileSync(configFile, renderConfig(answers));
      wroteConfig = true;
      term.line(`Wrote ${configFile}`);
    }
    const existingEnv = existsSync(envFile) ? readFileSync(envFile, "utf8") : "";
    let envText = existingEnv;
    const hasKey = existingEnv.split("\n").some((l) => l.replace(/^export\s+/, "").startsWith(`${preset.envVar}=`));
    if (hasKey && !(await confirm(`${envFile} already sets ${preset.envVar}. Replace it?`))) {
      term.line(`Kept ${preset.envVar} in ${envFile}.`);
    } else {
      envText = mergeDotEnv(envText, preset.envVar, apiKey || (preset.needsKey ? "" : "not-needed"));
      term.line(`Wrote ${preset.envVar} to ${envFile}`);
    }
    if (auth) {
      // an existing secret is kept: replacing it would sign out every session (and other servers sharing the .env)
      if (dotEnvHasValue(existingEnv, JWT_SECRET_VAR)) term.line(`Kept the existing ${JWT_SECRET_VAR} in ${envFile}.`);
      else {
        envText = mergeDotEnv(envText, JWT_SECRET_VAR, generateJwtSecret());
        term.line(`Wrote a new random ${JWT_SECRET_VAR} (signs sign-in sessions; not shown) to ${envFile}`);
      }
    }
    if (envText !== existingEnv || !existsSync(envFile)) {
      // `mode` applies only to a new file; .env holds secrets, so an older one is tightened first, before a new secret lands in it
      if (existsSync(envFile)) chmodSync(envFile, 0o600);
      writeFileSync(envFile, envText, { mode: 0o600 });
    }
    if (auth && !wroteConfig) {
      term.line(term.style("yellow", `${configFile} was kept, so sign-in is not on yet: add \`auth: {enabled: true, jwt_secret: $${JWT_SECRET_VAR}}\` to it.`));
    }
    term.line(term.style(sandbox === "bwrap" && probe.ok ? "gray" : "yellow", sandboxNotice(sandbox, probe)));
    if (auth) {
      await offerFirstAdmin({ dataDir, term, input, ask, adminEmail: values["admin-email"], yes: !!values.yes, setupUrl: `${DEFAULT_SERVE_URL}/setup` });
    }
    term.line("");
    const cd = path.dirname(configFile) === process.cwd() ? "" : `cd ${path.dirname(configFile)} && `;
    term.line(`Next: ${term.style("bold", `${cd}deerflow doctor`)} to check the setup, then ${term.style("bold", auth ? "deerflow serve" : 'deerflow run "hello"')}.`);
    return wroteConfig || existsSync(configFile) ? 0 : 1;
  } finally {
    input.close();
  }
}
