import { runScriptedLLMServerCli } from "@deerflow-ts/harness/testing";
import { FixedError } from "../common";
import type { Terminal } from "../io";
import { systemFix } from "./serve-errors";

/** The `--port` of the arguments (8787 when not given), for the message of a port that cannot be bound. */
function requestedPort(args: readonly string[]): number {
  const at = args.findIndex((a) => a === "--port" || a.startsWith("--port="));
  if (at < 0) return 8787;
  const value = args[at].includes("=") ? args[at].split("=")[1] : args[at + 1];
  return Number(value);
}

/** Help of `deerflow scripted-llm`. */
export const SCRIPTED_LLM_HELP = `Usage: deerflow scripted-llm [--port N] [--script steps.json | --demo] [--quiet]

Start the scripted OpenAI-compatible (and Anthropic) HTTP server on 127.0.0.1.
This is a TEST DOUBLE, not a model: it replays a script, or by default echoes
("You said: …") and calls a tool when asked ("use the tool bash with {...}").
Use it to try DeerFlow without an API key: point a model's base_url at the
printed URL. Stop it with Ctrl-C.

Options:
  --port N           port (default 8787; 0 picks a free port)
  --script FILE      JSON array of steps to replay
  --demo             play the scripted demo task for every message: write a
                     Markdown report to /mnt/user-data/outputs/, present it, answer
  --quiet            do not log requests
  -h, --help         show this help`;

/** `deerflow scripted-llm`: runs until SIGINT/SIGTERM. Returns null while serving (the process stays up). */
export async function scriptedLlmCommand(argv: string[], term: Terminal): Promise<number | null> {
  const rest = argv.filter((a) => a !== "--config" && a !== "--data-dir");
  if (rest.includes("--help") || rest.includes("-h")) {
    term.line(SCRIPTED_LLM_HELP);
    return 0;
  }
  // --config/--data-dir are accepted for uniformity but unused here: drop them and their values.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--config" || argv[i] === "--data-dir") i++;
    else if (argv[i].startsWith("--config=") || argv[i].startsWith("--data-dir=")) continue;
    else args.push(argv[i]);
  }
  const server = await runScriptedLLMServerCli(args, (l) => term.line(l)).catch((err: unknown) => {
    // a busy or forbidden port says which port and what to do, as `serve` does; a missing script names the file
    const sys = err as Error & { code?: string; port?: number; address?: string; syscall?: string; path?: string };
    if (sys.code === "ENOENT" && sys.path) throw new FixedError(`--script: ${sys.path} does not exist.`, "Pass the path of a JSON array of script steps (relative to the working directory), or leave out --script.", { cause: err });
    const listening = sys.syscall === "listen" || sys.syscall === "bind" || sys.code === "EADDRINUSE";
    const at = { host: sys.address ?? "127.0.0.1", port: sys.port ?? requestedPort(args), dataDir: "", command: "scripted-llm" };
    const fix = listening ? systemFix(sys, at) : undefined;
    throw fix ? new FixedError(`Cannot listen on ${at.host}:${at.port}.`, fix, { cause: err }) : err;
  });
  if (!server) return 0;
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return null;
}
