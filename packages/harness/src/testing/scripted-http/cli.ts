import { readFileSync } from "node:fs";
import { startScriptedLLMServer } from "./server";
import type { ScriptedLLMServer } from "./server";
import { demoStep } from "./demo-script";
import type { HttpScriptStep } from "./script";

const USAGE = `Usage: scripted-llm-server [--port N] [--script steps.json | --demo] [--quiet]

A scripted OpenAI-compatible + Anthropic HTTP server (a test double, not a model).
Without --script it runs a friendly echo model: it answers "You said: ...", and calls a
tool when you ask ("use the tool bash with {\\"command\\": \\"ls\\"}").
--script takes a JSON array of steps: "text", {"text","reasoning","toolCalls","usage"},
or {"fault": "rate_limit"|"server_error"|"unauthorized"|"insufficient_quota"|"hang"|...}.
--demo plays the scripted demo task for every message: it says it is scripted, writes a
Markdown report to /mnt/user-data/outputs/ with write_file, presents it, and answers.`;

/** Parsed CLI arguments. */
export interface ScriptedServerCliArgs {
  port: number;
  scriptFile?: string;
  /** Play {@link demoStep} for every request. */
  demo: boolean;
  quiet: boolean;
  help: boolean;
}

/** Parse CLI arguments (throws on bad input). */
export function parseScriptedServerArgs(argv: readonly string[]): ScriptedServerCliArgs {
  const out: ScriptedServerCliArgs = { port: 8787, demo: false, quiet: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--port" || a === "-p") {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port must be an integer 0-65535`);
      out.port = n;
    } else if (a.startsWith("--port=")) out.port = Number(a.slice(7));
    else if (a === "--script" || a === "-s") out.scriptFile = value();
    else if (a.startsWith("--script=")) out.scriptFile = a.slice(9);
    else if (a === "--quiet" || a === "-q") out.quiet = true;
    else if (a === "--demo") out.demo = true;
    else if (a === "--help" || a === "-h") out.help = true;
    else throw new Error(`Unknown argument ${a}\n${USAGE}`);
  }
  if (out.demo && out.scriptFile) throw new Error("--demo and --script are mutually exclusive");
  return out;
}

/**
 * Run the scripted server from a command line. Returns the running server
 * (the caller decides when to close it); prints the base URL and a config hint.
 */
export async function runScriptedLLMServerCli(
  argv: readonly string[],
  out: (line: string) => void = (l) => console.log(l),
): Promise<ScriptedLLMServer | null> {
  const args = parseScriptedServerArgs(argv);
  if (args.help) {
    out(USAGE);
    return null;
  }
  let script: HttpScriptStep[] | undefined;
  if (args.scriptFile) {
    const parsed = JSON.parse(readFileSync(args.scriptFile, "utf8")) as unknown;
    if (!Array.isArray(parsed)) throw new Error(`${args.scriptFile} must contain a JSON array of script steps`);
    script = parsed as HttpScriptStep[];
  }
  if (args.demo) script = [demoStep];
  const server = await startScriptedLLMServer({
    port: args.port,
    script,
    onExhausted: args.demo ? "repeat-last" : script ? "echo" : undefined,
    log: args.quiet ? undefined : out,
  });
  out(`Scripted LLM test double listening on ${server.url} (127.0.0.1 only)`);
  out(`OpenAI-compatible base_url: ${server.url}/v1   Anthropic base_url: ${server.url}`);
  out(`config.yaml:\n  models:\n    - name: scripted\n      use: openai-compatible\n      model: scripted\n      base_url: ${server.url}/v1`);
  return server;
}
