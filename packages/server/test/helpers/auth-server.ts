/**
 * Child-process gateway with sign-in on, for the tests that need several
 * server processes on one data dir (argv[2]). A fixed test secret; the
 * login throttle and accounts live in `{dataDir}/auth.db`.
 * Prints one JSON line `{"url": ...}` once listening.
 */
import { createAgent, MemoryCheckpointStore, threadStateSchema } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import { authEnabled } from "./auth-session";

const dataDir = process.argv[2]!;
const checkpointer = new MemoryCheckpointStore();
const model = new ScriptedModel([]);
const gateway = await createGateway({
  dataDir,
  checkpointer,
  webDistDir: null,
  log: () => undefined,
  auth: authEnabled(),
  agentFactory: () => createAgent({ model, tools: [], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
});
const url = await gateway.start({ port: 0 });
process.stdout.write(JSON.stringify({ url }) + "\n");
const stop = () => void gateway.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
