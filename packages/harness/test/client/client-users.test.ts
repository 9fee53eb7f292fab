import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { DeerFlowClient } from "../../src/client";
import type { AgentFactory } from "../../src/deerflow-runtime";
import { createMemoryStores } from "../../src/persistence";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";

const factory: AgentFactory = ({ checkpointer }) =>
  createAgent({ model: new ScriptedModel(["Alice's answer"], { onExhausted: "repeat-last" }), checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });

describe("the embedded client is its user on a data dir shared with the gateway", () => {
  it("another user's thread (row and checkpoints) is not found by getThread and has no messages for getMessages", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "df-client-users-"));
    const stores = createMemoryStores();
    const checkpointer = new MemoryCheckpointStore();
    const alice = new DeerFlowClient({ dataDir, stores, checkpointer, agentFactory: factory, userId: "alice" });
    await alice.chat("my secret plan", { threadId: "t-alice" });
    expect((await alice.getMessages("t-alice")).length).toBeGreaterThan(0);

    const bob = new DeerFlowClient({ dataDir, stores, checkpointer, agentFactory: factory, userId: "bob" });
    await expect(bob.getThread("t-alice")).rejects.toMatchObject({ status: 404 });
    await expect(bob.getMessages("t-alice")).resolves.toEqual([]);
  });
});
