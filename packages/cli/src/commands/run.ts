import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import path from "node:path";
import type { ClientUsage } from "@deerflow-ts/harness/client";
import type { UploadedFileInfo } from "@deerflow-ts/harness/uploads";
import { unknownKeysOfConfigFile } from "@deerflow-ts/harness/config";
import { mcpFailureLines } from "@deerflow-ts/harness/mcp";
import { producedArtifacts } from "../artifacts";
import { openCheckedClient } from "../client-setup";
import { COMMON_HELP, commonOptions, describeError, FixedError, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";
import { TurnRenderer, usageSummary } from "../render";
import { localUserNote } from "../user-admin";

/** Help of `deerflow run`. */
export const RUN_HELP = `Usage: deerflow run "task" [options]

Run one task and stream the answer. Tool calls show as progress lines; the
files the agent produced are listed (with host paths) at the end.

Options:
  --thread ID        continue this thread (an unknown id is an error; default: a new
                     thread). \`deerflow threads\` lists them
  --model NAME       model from config.yaml (default: the first model; an unknown
                     name is an error listing the configured ones)
  --plan             plan mode (the agent keeps a todo list)
  --subagents        let the agent delegate to parallel sub-agents ("ultra");
                     their progress shows as nested lines
  --files A,B        upload these files to the thread first (comma-separated)
  --json             print one JSON event per line; the last line is
                     {"type":"end","thread_id","text","artifacts","usage"}
${COMMON_HELP}

Exit codes: 0 success, 1 the run failed (reason on stderr), 2 bad usage, 130 interrupted.`;

/** `deerflow run`. */
export async function runCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand(
    "run",
    argv,
    { thread: { type: "string" }, model: { type: "string" }, plan: { type: "boolean" }, subagents: { type: "boolean" }, files: { type: "string" }, json: { type: "boolean" } },
    true,
  );
  if (values.help) {
    term.line(RUN_HELP);
    return 0;
  }
  const task = positionals.join(" ").trim();
  if (!task) throw new UsageError('a task is required, e.g. deerflow run "Summarise README.md"', "run");
  const common = commonOptions(values);
  const json = !!values.json;
  const emit = (obj: unknown) => term.line(JSON.stringify(obj));
  const files = values.files ? checkedFiles(values.files, common.cwd) : undefined;
  // Config, runtime (stores, sandbox provider), --model and --thread are checked before anything is printed:
  // a config it refuses ends the command here with the reason instead of as a failed run.
  const client = await openCheckedClient(common, { modelName: values.model, planMode: !!values.plan, subagentEnabled: !!values.subagents, threadId: values.thread });
  for (const k of unknownKeysOfConfigFile({ path: common.configPath, cwd: common.cwd })) term.error(`Warning: ${k.message}`);
  const threadId = values.thread ?? randomUUID();
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error("interrupted by Ctrl-C"));
  process.once("SIGINT", onSigint);
  const started = Date.now();
  const renderer = new TurnRenderer(json ? quietTerminal(term) : term);
  let usage: ClientUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  try {
    if (!json) {
      term.line(term.style("gray", `thread ${threadId}`));
      const note = localUserNote(common);
      if (note) term.line(term.style("gray", note));
    }
    for await (const ev of client.stream(task, { threadId, signal: controller.signal, files })) {
      const data = ev.type === "custom" ? (ev.data as { type?: string; files?: UploadedFileInfo[]; skipped_files?: string[] }) : undefined;
      if (data?.type === "uploads") {
        if (json) emit({ type: "uploads", data });
        else for (const f of data.files ?? []) term.line(term.style("gray", `Uploaded ${f.filename} → ${f.virtual_path}`));
        if (!json && data.skipped_files?.length) term.error(`Skipped files with unusable names: ${data.skipped_files.join(", ")}`);
        continue;
      }
      if (ev.type === "end") {
        usage = ev.data.usage;
        if (ev.data.status === "cancelled") throw new Error("Run cancelled (Ctrl-C).");
        continue;
      }
      renderer.handle(ev);
      if (json) emit(ev);
    }
    renderer.finish();
    const artifacts = await producedArtifacts(client.threadPaths(threadId), renderer.artifacts, started);
    if (json) {
      emit({ type: "end", thread_id: threadId, text: renderer.finalText, artifacts: artifacts.map((a) => a.virtualPath), usage });
    } else {
      if (artifacts.length) {
        term.line("");
        term.line(term.style("bold", "Artifacts:"));
        for (const a of artifacts) term.line(`  ${a.virtualPath}  ${term.style("gray", a.hostPath)}`);
      }
      term.line(term.style("gray", `tokens: ${usageSummary(usage)} · thread ${threadId}`));
    }
    return 0;
  } catch (err) {
    renderer.finish();
    let reason = describeError(err);
    // a model server that refused the connection (the run's error names its base_url) has a known fix
    if (reason.startsWith("unreachable: ")) reason += "\nFix: Start the model server, or correct base_url in config.yaml (`deerflow doctor` checks it).";
    if (json) emit({ type: "error", thread_id: threadId, message: reason });
    term.error(`Run failed: ${reason}`);
    return controller.signal.aborted ? 130 : 1;
  } finally {
    process.removeListener("SIGINT", onSigint);
    for (const line of mcpFailureLines((await client.runtime().catch(() => undefined))?.extensions.mcp)) term.error(line);
    await client.close();
  }
}

/** The `--files` paths, resolved; a missing or unreadable one is an error naming it before anything runs. */
function checkedFiles(list: string, cwd: string): string[] {
  const files = list.split(",").map((f) => f.trim()).filter(Boolean).map((f) => path.resolve(cwd, f));
  for (const file of files) {
    let isFile = false;
    try {
      isFile = statSync(file).isFile();
    } catch {
      throw new FixedError(`--files: ${file} does not exist.`, "Check the path (relative paths are taken from the working directory; separate several files with commas).");
    }
    if (!isFile) throw new FixedError(`--files: ${file} is not a file.`, "Pass files, not directories (separate several with commas).");
  }
  return files;
}

/** A terminal whose stdout writes are dropped (used by --json so only JSON reaches stdout). */
function quietTerminal(term: Terminal): Terminal {
  return Object.assign(Object.create(Object.getPrototypeOf(term)) as Terminal, term, {
    write: () => undefined,
    line: () => undefined,
    startSpinner: () => undefined,
    stopSpinner: () => undefined,
  });
}
