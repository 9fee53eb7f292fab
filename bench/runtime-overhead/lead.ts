import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SqliteCheckpointStore } from "../../packages/harness/src/checkpoints";
import { humanMessage } from "../../packages/harness/src/messages";
import type { Agent } from "../../packages/harness/src/runtime";
import { InstantModel } from "./instant-model";
import { ourNoopTool } from "./ours";

const here = path.dirname(fileURLToPath(import.meta.url));
/**
 * Where the lead-agent factory lives (loaded only if it exists);
 * `BENCH_LEAD_MODULE` points elsewhere (e.g. to try a factory in progress).
 */
export const AGENTS_INDEX = process.env.BENCH_LEAD_MODULE
  ? path.resolve(process.env.BENCH_LEAD_MODULE)
  : path.resolve(here, "../../packages/harness/src/agents/index.ts");

/** The lead agent under test, or why it is unavailable. */
export type LeadSetup =
  | { ok: true; agent: Agent; store: SqliteCheckpointStore; middlewareNames: string[] }
  | { ok: false; reason: string };

type Factory = (...args: unknown[]) => Agent | Promise<Agent>;

function isAgent(value: unknown): value is Agent {
  return !!value && typeof (value as Agent).invoke === "function";
}

/**
 * Build DeerFlow's lead agent through `createDeerflowAgent` from
 * `packages/harness/src/agents/index.ts`, with the instant model, the no-op
 * tool and a SQLite store. Mirrors DeerFlow's
 * `create_deerflow_agent(model, tools, *, checkpointer, …)`: called as
 * `createDeerflowAgent({ model, tools, checkpointer, name })`, or positionally
 * `(model, tools, { checkpointer, name })` when the factory declares two or
 * more parameters. Returns a reason instead of throwing when unavailable.
 */
export async function buildLeadAgent(dbPath: string, baseDir: string): Promise<LeadSetup> {
  if (!existsSync(AGENTS_INDEX)) return { ok: false, reason: `${path.relative(process.cwd(), AGENTS_INDEX)} does not exist yet` };
  let factory: Factory | undefined;
  try {
    const mod = (await import(pathToFileURL(AGENTS_INDEX).href)) as Record<string, unknown>;
    if (typeof mod.createDeerflowAgent === "function") factory = mod.createDeerflowAgent as Factory;
  } catch (err) {
    return { ok: false, reason: `importing ${AGENTS_INDEX} failed: ${(err as Error).message}` };
  }
  if (!factory) return { ok: false, reason: `${path.basename(AGENTS_INDEX)} does not export createDeerflowAgent yet` };
  process.env.DEER_FLOW_HOME ??= baseDir;
  const store = new SqliteCheckpointStore(dbPath);
  const model = new InstantModel();
  const opts = { checkpointer: store, name: "bench-lead", baseDir };
  try {
    const built = factory.length >= 2 ? await factory(model, [ourNoopTool], opts) : await factory({ model, tools: [ourNoopTool], ...opts });
    if (!isAgent(built)) return { ok: false, reason: "createDeerflowAgent did not return an agent with invoke()" };
    return { ok: true, agent: built, store, middlewareNames: (built.middleware ?? []).map((m) => m.name) };
  } catch (err) {
    await store.close();
    return { ok: false, reason: `createDeerflowAgent threw: ${(err as Error).message}` };
  }
}

/**
 * One lead-agent turn. The lead chain may add its own messages, so the check
 * is: the run succeeded and the no-op tool answered after this turn's input.
 */
export async function leadTurn(agent: Agent, threadId: string, text: string): Promise<void> {
  const r = await agent.invoke({ messages: [humanMessage(text)] }, { threadId });
  if (r.status !== "success") throw new Error(`lead run failed on ${threadId}: ${r.status} ${r.error?.message ?? ""}`);
  const msgs = r.state.messages;
  let lastHuman = -1;
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].type === "human") { lastHuman = i; break; }
  const answered = msgs.slice(lastHuman + 1).some((m) => m.type === "tool" && m.name === ourNoopTool.name && m.status !== "error");
  if (!answered) throw new Error(`lead turn on ${threadId}: the no-op tool did not run successfully`);
}
