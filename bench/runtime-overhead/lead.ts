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

function isAgent(value: unknown): value is Agent {
  return !!value && typeof (value as Agent).invoke === "function";
}

/**
 * Build DeerFlow's full lead agent through `createLeadAgentFactory().makeLeadAgent()`
 * (the same path the gateway uses: every middleware of the lead chain that is
 * on by default, the static prompt, config tools) with the instant model, the
 * no-op tool and a SQLite store. Returns a reason instead of throwing when the
 * factory is unavailable.
 */
export async function buildLeadAgent(dbPath: string, baseDir: string): Promise<LeadSetup> {
  if (!existsSync(AGENTS_INDEX)) return { ok: false, reason: `${path.relative(process.cwd(), AGENTS_INDEX)} does not exist yet` };
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(AGENTS_INDEX).href)) as Record<string, unknown>;
  } catch (err) {
    return { ok: false, reason: `importing ${AGENTS_INDEX} failed: ${(err as Error).message}` };
  }
  if (typeof mod.createLeadAgentFactory !== "function") return { ok: false, reason: `${path.basename(AGENTS_INDEX)} does not export createLeadAgentFactory` };
  const { appConfigFromText } = await import("../../packages/harness/src/config");
  const { config } = appConfigFromText(
    [
      "models:",
      "  - { name: instant, use: openai-compatible, model: instant, base_url: http://127.0.0.1:9/v1, api_key: x }",
      "sandbox: { use: local }",
    ].join("\n"),
  );
  const store = new SqliteCheckpointStore(dbPath);
  const model = new InstantModel();
  try {
    const factory = (mod.createLeadAgentFactory as (o: unknown) => { makeLeadAgent(r?: unknown): Promise<Agent> })({
      config,
      baseDir,
      checkpointer: store,
      extraTools: [ourNoopTool],
      warn: () => {},
      modelFactory: () => ({
        model,
        warnings: [],
        config: { name: "instant", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null },
      }),
    });
    const built = await factory.makeLeadAgent({});
    if (!isAgent(built)) return { ok: false, reason: "makeLeadAgent did not return an agent with invoke()" };
    return { ok: true, agent: built, store, middlewareNames: (built.middleware ?? []).map((m) => m.name) };
  } catch (err) {
    await store.close();
    return { ok: false, reason: `makeLeadAgent threw: ${(err as Error).message}` };
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
