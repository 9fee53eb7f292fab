import fs from "node:fs";
import path from "node:path";
import { threadDirs } from "../../src/sandbox";
import { describe, expect, it } from "vitest";
import { call, FIXTURES, makePool, nodeServer, toolRuntime } from "./_helpers";

const PICKY = path.join(FIXTURES, "thread-picky-server.mjs");
const SECRET = "Alice's diary: the merger closes on Friday";

describe("one user's MCP session failure stays that user's", () => {
  it("a stdio session that fails in A's thread (quoting A's file) neither shows in the server status nor reaches B, whose session still works", async () => {
    const h = makePool({ picky: nodeServer(PICKY, ["/mnt/user-data/workspace"]) }, { retryInitialMs: 60_000 });
    try {
      const tools = await h.pool.getTools();
      expect(tools.map((t) => t.name)).toContain("picky_echo");
      const a = threadDirs(path.join(h.dir, "data"), "thread-a", "user-a");
      fs.mkdirSync(a.workspace, { recursive: true });
      fs.writeFileSync(path.join(a.workspace, "diary.txt"), SECRET);

      // A's own call fails with A's own error
      const mine = await call(tools, "picky_echo", { text: "hi" }, toolRuntime("thread-a", "user-a"));
      expect(mine.status).toBe("error");

      // nothing of it is shared: the status every user reads, and B's call in B's thread
      const status = h.pool.status().find((s) => s.name === "picky")!;
      expect(JSON.stringify(status)).not.toContain("merger");
      expect(status.state).toBe("connected");
      const theirs = await call(tools, "picky_echo", { text: "from bob" }, toolRuntime("thread-b", "user-b"));
      expect(String(theirs.content)).not.toContain("merger");
      expect(theirs).toMatchObject({ status: expect.not.stringMatching(/error/), content: "echo: from bob" });
    } finally {
      await h.cleanup();
    }
  });
});
