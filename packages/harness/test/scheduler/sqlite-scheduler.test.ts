import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteScheduledTaskStore } from "../../src/scheduler";
import { describeScheduler } from "./scheduler-suite";

// Two stores over one gateway.db: two server processes on one data dir.
describeScheduler("two SQLite connections on one file", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "deerflow-scheduler-"));
  const file = path.join(dir, "gateway.db");
  const a = new SqliteScheduledTaskStore(file);
  const b = new SqliteScheduledTaskStore(file);
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
