import { describe } from "vitest";
import { openPgPool } from "../../src/postgres";
import { PostgresScheduledTaskStore } from "../../src/scheduler";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import { describeScheduler } from "./scheduler-suite";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

// Two pools on one database: two server processes sharing PostgreSQL.
describe.skipIf(!serverUrl)("PostgreSQL", () => {
  describeScheduler("two PostgreSQL pools on one database", async () => {
    const db = await freshPostgresDatabase(serverUrl!);
    const poolA = await openPgPool({ url: db.url, log: () => undefined, max: 3 });
    const poolB = await openPgPool({ url: db.url, log: () => undefined, max: 3 });
    return {
      a: new PostgresScheduledTaskStore(poolA),
      b: new PostgresScheduledTaskStore(poolB),
      async close() {
        await poolA.end();
        await poolB.end();
        await db.drop();
      },
    };
  });
});
