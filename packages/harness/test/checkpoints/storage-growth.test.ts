import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { asCheckpointer, MemoryCheckpointStore, SqliteCheckpointStore } from "../../src/checkpoints";
import type { CheckpointRecord, CheckpointStore } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

const dir = mkdtempSync(join(tmpdir(), "df-growth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TURNS = 60;

/**
 * Run metadata as the gateway passes it to every run (the lead agent's
 * settings and DeerFlow's keys): about 350 bytes once serialised, written into
 * each of a run's checkpoints.
 */
const RUN_METADATA = {
  ls_integration: "langchain_create_agent",
  available_skills: null,
  agent_name: "default",
  model_name: "gpt-4.1-mini",
  thinking_enabled: false,
  reasoning_effort: null,
  is_plan_mode: false,
  subagent_enabled: true,
  max_concurrent_subagents: 3,
  assistant_id: "lead_agent",
  graph_id: "lead_agent",
  user_id: "default",
  langgraph_version: "1.0.0",
  langgraph_api_url: "http://127.0.0.1:2024",
  run_attempt: 1,
  created_by: "system",
};

const lookup = tool({
  name: "lookup",
  description: "Looks a word up.",
  schema: z.object({ word: z.string() }),
  execute: ({ word }) => `definition of ${word}`,
});

/** A 60-turn thread (human → model → tool → model each turn); returns the stored bytes after each turn. */
async function sixtyTurns(store: CheckpointStore & { storedBytes?(threadId: string): Promise<number> }, threadId: string): Promise<number[]> {
  const model = new ScriptedModel();
  const agent = createAgent({ model, tools: [lookup], checkpointer: store });
  const sizes: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    model.push({ text: `Let me look up word ${turn}.`, toolCalls: [{ name: "lookup", args: { word: `w${turn}` } }] }, `Word ${turn} means what the tool said.`);
    const r = await agent.invoke({ messages: [humanMessage(`What does word ${turn} mean?`)] }, { threadId, metadata: RUN_METADATA });
    expect(r.status).toBe("success");
    sizes.push(store.storedBytes ? await store.storedBytes(threadId) : 0);
  }
  model.assertComplete();
  return sizes;
}

/** What the rows would hold if every checkpoint carried its full metadata (the format this replaces). */
function fullFormatBytes(records: readonly CheckpointRecord[]): number {
  return records.reduce((n, r) => n + JSON.stringify(r.metadata).length + JSON.stringify(r.delta).length, 0);
}

describe("checkpoint storage of a 60-turn thread", () => {
  it("stores the run metadata once per run: bytes per turn stay small and constant, reads still see it all", async () => {
    const store = new SqliteCheckpointStore(join(dir, "growth.db"));
    try {
      const sizes = await sixtyTurns(store, "t60");
      const total = sizes[TURNS - 1];
      const perTurn = (n: number) => sizes[n - 1] - sizes[n - 2];
      // Every checkpoint, through the checkpointer, carries the run's metadata and its own keys.
      const records = await asCheckpointer(store).list("t60");
      expect(records.length).toBe(TURNS * 4); // input, model, tools, model
      for (const r of records) {
        expect(r.metadata).toMatchObject({ ...RUN_METADATA, run_id: expect.any(String) });
        expect(r.metadata).not.toHaveProperty("__run_base");
      }
      // The same rows with the metadata in every one: the run metadata alone is 4 × ~350 B per turn.
      const full = fullFormatBytes(records);
      expect(full - total).toBeGreaterThan(TURNS * 3 * 300);
      console.log(`60-turn thread: ${(total / 1024).toFixed(1)} KB stored (${(full / 1024).toFixed(1)} KB with the metadata in every row); turn 10 ${perTurn(10)} B, turn 60 ${perTurn(60)} B`);
      // A turn's four messages take ~1.4 KB; with the run's metadata once, a turn stays under 2.6 KB stored,
      // where the metadata in every row needs more than 3.2 KB for the same turn.
      expect(total / TURNS).toBeLessThan(2600);
      expect(full / TURNS).toBeGreaterThan(3200);
      // Linear: turn 60 costs what turn 10 costs (its messages are the same size), not more.
      expect(perTurn(60)).toBeLessThan(perTurn(10) * 1.1);
      expect(perTurn(60)).toBeGreaterThan(perTurn(10) * 0.9);
      // The snapshot of a middle checkpoint (read by id, its run's first checkpoint fetched) has the full metadata.
      const middle = records[Math.floor(records.length / 2)];
      const fresh = asCheckpointer(new SqliteCheckpointStore(store.db));
      expect((await fresh.load("t60", middle.checkpointId))!.record.metadata).toEqual(middle.metadata);
      expect((await fresh.list("t60", { limit: 1, before: middle.checkpointId }))[0].metadata).toMatchObject(RUN_METADATA);
    } finally {
      await store.close();
    }
  });

  it("the in-memory store gets the same records (the format lives in the checkpointer, not in the stores)", async () => {
    const store = new MemoryCheckpointStore();
    await sixtyTurns(store, "m60");
    const raw = await store.list("m60");
    const firsts = raw.filter((r) => !("__run_base" in r.metadata));
    // One row per run holds the run metadata; the others name that row.
    expect(firsts.length).toBe(TURNS);
    for (const r of firsts) expect(r.metadata).toMatchObject(RUN_METADATA);
    for (const r of raw.filter((x) => "__run_base" in x.metadata)) expect(r.metadata).not.toHaveProperty("model_name");
    const full = await asCheckpointer(store).list("m60");
    for (const r of full) expect(r.metadata).toMatchObject(RUN_METADATA);
  });

  it("a run with hardly any metadata stores it whole in each row (a reference to its first row would be larger)", async () => {
    const store = new MemoryCheckpointStore();
    const model = new ScriptedModel([{ text: "looking", toolCalls: [{ name: "lookup", args: { word: "w" } }] }, "done"]);
    const agent = createAgent({ model, tools: [lookup], checkpointer: store });
    expect((await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "small", metadata: { a: 1 } })).status).toBe("success");
    const raw = await store.list("small");
    expect(raw.length).toBe(4);
    for (const r of raw) expect(r.metadata).toMatchObject({ a: 1, parents: {}, run_id: expect.any(String) });
    for (const r of raw) expect(r.metadata).not.toHaveProperty("__run_base");
  });
});
