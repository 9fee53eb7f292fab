import { describe, expect, it } from "vitest";
import { startPostgres } from "@deerflow-ts/harness/testing";
import { CheckpointError } from "../../src/errors";
import { openPostgresStorage } from "../../src/postgres";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

// A server of its own: this test stops it.
describe.skipIf(!serverUrl)("PostgreSQL going away under open stores", () => {
  it("calls fail with typed errors, idle connection loss is logged masked, nothing goes unhandled", async () => {
    const server = await startPostgres();
    const logged: string[] = [];
    let stopped = false;
    try {
      const url = new URL(server.url);
      url.password = "gone-pw"; // trust auth ignores it; it must still never be printed
      const storage = await openPostgresStorage({ url: url.toString(), schema: "outage", log: (m) => logged.push(m), max: 2 });
      try {
        await storage.checkpointStore.put({ threadId: "t", checkpointId: "c0", parentId: null, createdAt: "x", metadata: { step: -1, source: "input" }, delta: {} });
        expect(await storage.checkpointStore.headId("t")).toBe("c0");
        await server.stop();
        stopped = true;
        const put = await storage.checkpointStore
          .put({ threadId: "t", checkpointId: "c1", parentId: "c0", createdAt: "x", metadata: { step: 0, source: "loop" }, delta: {} })
          .catch((e: unknown) => e);
        expect(put).toBeInstanceOf(CheckpointError);
        expect((put as CheckpointError).code).toBe("checkpoint_error");
        await expect(storage.checkpointStore.get("t")).rejects.toBeInstanceOf(CheckpointError);
        await expect(storage.stores.threads.get("t")).rejects.toThrow();
        await expect(storage.runLock.acquire("t", "r", "me", 2, 1)).rejects.toThrow();
        // a later write of the same thread is not stuck behind the failed one
        await expect(
          storage.checkpointStore.put({ threadId: "t", checkpointId: "c2", parentId: "c0", createdAt: "x", metadata: { step: 0, source: "loop" }, delta: {} }),
        ).rejects.toBeInstanceOf(CheckpointError);
        expect([...logged, String(put)].join("\n")).not.toContain("gone-pw");
      } finally {
        await storage.close();
      }
    } finally {
      if (!stopped) await server.stop();
    }
  });
});
