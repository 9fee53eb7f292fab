/**
 * Child-process gateway for the crash test: SQLite checkpoints and gateway
 * tables in one database under the data dir given as argv[2]; a ScriptedModel
 * whose second run stalls so the parent can SIGKILL it mid-run.
 * Prints one JSON line `{"url": ...}` once listening.
 */
import path from "node:path";
import { createAgent, SqliteCheckpointStore, threadStateSchema } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import { echoTool } from "./test-gateway";

const dataDir = process.argv[2];
const checkpointer = new SqliteCheckpointStore(path.join(dataDir, "deerflow.db"));
const model = new ScriptedModel([
  "first run answer",
  { text: "working", toolCalls: [{ name: "echo", args: { text: "persisted" }, id: "call_p" }] },
  { text: "never finishes", delayMs: 600_000 },
]);
const gateway = await createGateway({
  dataDir,
  database: checkpointer.db,
  checkpointer,
  webDistDir: null,
  agentFactory: () => createAgent({ model, tools: [echoTool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
});
const url = await gateway.start({ port: 0 });
process.stdout.write(JSON.stringify({ url, recovered: gateway.recoveredRuns }) + "\n");
