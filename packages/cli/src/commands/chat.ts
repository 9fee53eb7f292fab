import { randomUUID } from "node:crypto";
import { buildHumanInputResponse, findClarificationRequest } from "@deerflow-ts/harness/client";
import type { PendingClarification } from "@deerflow-ts/harness/client";
import { producedArtifacts } from "../artifacts";
import { openCheckedClient } from "../client-setup";
import { unknownKeysOfConfigFile } from "@deerflow-ts/harness/config";
import { COMMON_HELP, commonOptions, describeError, parseCommand } from "../common";
import { LineInput } from "../io";
import type { Terminal } from "../io";
import { TurnRenderer, usageSummary } from "../render";
import { localUserNote } from "../user-admin";

/** Help of `deerflow chat`. */
export const CHAT_HELP = `Usage: deerflow chat [options]

Interactive multi-turn chat. Up/down arrows recall earlier inputs.
Ctrl-C stops a running answer without leaving; Ctrl-D or /exit quits.
When the agent asks a clarification question, type the answer (or the
number of an option) at the "answer ›" prompt.

Commands inside the chat:
  /new       start a new thread
  /thread    show the current thread id
  /exit      quit

Options:
  --thread ID        continue this thread (an unknown id is an error; default: a new
                     thread). \`deerflow threads\` lists them
  --model NAME       model from config.yaml (an unknown name is an error)
  --subagents        let the agent delegate to parallel sub-agents ("ultra")
${COMMON_HELP}`;

/** `deerflow chat`. */
export async function chatCommand(argv: string[], term: Terminal): Promise<number> {
  const { values } = parseCommand("chat", argv, { thread: { type: "string" }, model: { type: "string" }, subagents: { type: "boolean" } });
  if (values.help) {
    term.line(CHAT_HELP);
    return 0;
  }
  const common = commonOptions(values);
  // Config, runtime, --model and --thread are checked before the prompt shows: a chat that cannot answer
  // fails now (exit 1), not after the first message, and also when stdin is empty.
  const client = await openCheckedClient(common, { modelName: values.model, subagentEnabled: !!values.subagents, threadId: values.thread });
  let threadId = values.thread ?? randomUUID();
  const input = new LineInput();
  let running: AbortController | undefined;
  let lastSigint = 0;
  const onSigint = () => {
    if (running) {
      running.abort(new Error("stopped by Ctrl-C"));
      return;
    }
    const now = Date.now();
    if (now - lastSigint < 1500) {
      input.close();
      return;
    }
    lastSigint = now;
    term.line(term.style("gray", "\n(press Ctrl-C again or Ctrl-D to quit)"));
  };
  input.rl.on("SIGINT", onSigint);
  process.on("SIGINT", onSigint);
  term.line(term.style("bold", "DeerFlow chat") + term.style("gray", ` · thread ${threadId} · /exit to quit`));
  const note = localUserNote(common);
  if (note) term.line(term.style("gray", note));
  for (const k of unknownKeysOfConfigFile({ path: common.configPath, cwd: common.cwd })) term.error(`Warning: ${k.message}`);
  let failures = 0;

  const turn = async (text: string, additionalKwargs?: Record<string, unknown>): Promise<PendingClarification | undefined> => {
    running = new AbortController();
    const renderer = new TurnRenderer(term);
    const started = Date.now();
    try {
      for await (const ev of client.stream(text, { threadId, signal: running.signal, additionalKwargs })) renderer.handle(ev);
      renderer.finish();
      if (running.signal.aborted) {
        term.line(term.style("yellow", "(stopped)"));
        return undefined;
      }
      const artifacts = await producedArtifacts(client.threadPaths(threadId), renderer.artifacts, started);
      for (const a of artifacts) term.line(term.style("gray", `  📄 ${a.virtualPath}  ${a.hostPath}`));
      term.line(term.style("gray", `tokens: ${usageSummary(renderer.usage)}`));
      const thread = await client.getThread(threadId);
      return findClarificationRequest((thread.values.messages as Record<string, unknown>[] | undefined) ?? []);
    } catch (err) {
      renderer.finish();
      if (running.signal.aborted) term.line(term.style("yellow", "(stopped)"));
      else {
        failures++;
        term.error(`Error: ${describeError(err)}`);
      }
      return undefined;
    } finally {
      running = undefined;
    }
  };

  try {
    for (;;) {
      const line = await input.ask(term.style("cyan", "you › "));
      if (line === undefined) break;
      const text = line.trim();
      if (!text) continue;
      if (text === "/exit" || text === "/quit") break;
      if (text === "/thread") {
        term.line(threadId);
        continue;
      }
      if (text === "/new") {
        threadId = randomUUID();
        term.line(term.style("gray", `new thread ${threadId}`));
        continue;
      }
      let pending = await turn(text);
      while (pending) {
        pending.options.forEach((o, i) => term.line(`  ${i + 1}. ${o.label}`));
        const answer = await input.ask(term.style("yellow", "answer › "));
        if (answer === undefined || !answer.trim()) break;
        const reply = buildHumanInputResponse(pending, answer);
        pending = await turn(reply.text, reply.additionalKwargs);
      }
    }
  } finally {
    process.removeListener("SIGINT", onSigint);
    input.close();
    await client.close();
  }
  return failures ? 1 : 0;
}
