import { openCheckedClient } from "../client-setup";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow threads`. */
export const THREADS_HELP = `Usage: deerflow threads [options]

List the threads of this data dir, newest first: id, status, last update and
title. Continue one with \`deerflow run --thread ID "…"\` or \`deerflow chat --thread ID\`.

Options:
  --limit N          how many (default 20)
  --json             print the threads as one JSON array
${COMMON_HELP}`;

/** `deerflow threads`. */
export async function threadsCommand(argv: string[], term: Terminal): Promise<number> {
  const { values } = parseCommand("threads", argv, { limit: { type: "string" }, json: { type: "boolean" } });
  if (values.help) {
    term.line(THREADS_HELP);
    return 0;
  }
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer, got '${values.limit}'`, "threads");
  const common = commonOptions(values);
  const client = await openCheckedClient(common, {});
  try {
    const threads = await client.listThreads(limit);
    if (values.json) {
      term.line(JSON.stringify(threads.map((t) => ({ thread_id: t.thread_id, status: t.status, updated_at: t.updated_at, title: t.values.title ?? null }))));
      return 0;
    }
    if (!threads.length) {
      term.line(term.style("gray", `No threads in ${common.dataDir} yet.`));
      return 0;
    }
    for (const t of threads) {
      const title = typeof t.values.title === "string" ? t.values.title : "";
      term.line(`${t.thread_id}  ${term.style("gray", `${t.status.padEnd(11)} ${t.updated_at}`)}  ${title}`);
    }
    return 0;
  } finally {
    await client.close();
  }
}
