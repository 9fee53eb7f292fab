import { describeError, UsageError } from "./common";
import { exitOnBrokenPipe, Terminal } from "./io";
import { PromptAbortedError } from "./password-input";

/** Top-level help. */
export const MAIN_HELP = `DeerFlow — a super agent harness, in your terminal.

Usage: deerflow <command> [options]

Commands:
  init                 set up config.yaml and .env (provider, key, sandbox)
  doctor               check config, env vars, model reachability, sandbox, data dir
  run "task"           run one task, streaming the answer (--json for machine output)
  chat                 interactive multi-turn chat
  threads              list the threads of this data dir (ids for --thread)
  serve                start the gateway API and web UI
  config upgrade       add new default settings to an older config.yaml
  skills <sub>         list, show, install, enable, disable, delete skills
  agents <sub>         list custom agents; import file agents into the database (agent_storage.backend: db)
  users <sub>          add, list, reset-password, set-role: accounts that sign in
  tokens <sub>         list, create, revoke an account's personal access tokens
  sandbox image build  build the Docker sandbox image (--from-host: without a registry)
  provisioner          serve sandboxes to other servers (DeerFlow's provisioner API; Docker or Kubernetes)
  scripted-llm         start a scripted OpenAI-compatible server (a test double, not a model)

Every command accepts --config PATH and --data-dir PATH (default .deer-flow/ beside config.yaml).
Run "deerflow <command> --help" for details.`;

type Command = (argv: string[], term: Terminal) => Promise<number | null>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  init: async () => (await import("./commands/init")).initCommand,
  doctor: async () => (await import("./commands/doctor")).doctorCommand,
  run: async () => (await import("./commands/run")).runCommand,
  chat: async () => (await import("./commands/chat")).chatCommand,
  threads: async () => (await import("./commands/threads")).threadsCommand,
  serve: async () => (await import("./commands/serve")).serveCommand,
  config: async () => (await import("./commands/config-upgrade")).configCommand,
  skills: async () => (await import("./commands/skills")).skillsCommand,
  agents: async () => (await import("./commands/agents")).agentsCommand,
  users: async () => (await import("./commands/users")).usersCommand,
  tokens: async () => (await import("./commands/tokens")).tokensCommand,
  sandbox: async () => (await import("./commands/sandbox-image")).sandboxCommand,
  "scripted-llm": async () => (await import("./commands/scripted-llm")).scriptedLlmCommand,
  provisioner: async () => (await import("./commands/provisioner")).provisionerCommand,
};

/**
 * Run the CLI. Resolves to the exit code, or null for long-running commands
 * (serve, scripted-llm) that keep the process alive.
 */
export async function main(argv: string[], term: Terminal = new Terminal()): Promise<number | null> {
  if (term.out === process.stdout) exitOnBrokenPipe(process.stdout);
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    term.line(MAIN_HELP);
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v") {
    term.line("deerflow 0.1.0");
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    term.error(`Unknown command '${name}'. Run "deerflow --help" to see the commands.`);
    return 2;
  }
  try {
    const command = await load();
    return await command(rest, term);
  } catch (err) {
    if (err instanceof PromptAbortedError) {
      term.error("Cancelled.");
      return 130;
    }
    if (err instanceof UsageError) {
      term.error(`deerflow ${err.command}: ${err.message}\nRun "deerflow ${err.command} --help" for usage.`);
      return 2;
    }
    term.error(`Error: ${describeError(err)}`);
    return 1;
  }
}
