import { DeerFlowClient } from "@deerflow-ts/harness/client";
import type { DeerFlowClientOptions } from "@deerflow-ts/harness/client";
import { DeerFlowError, ModelConfigError } from "@deerflow-ts/harness/errors";
import { unknownModelError } from "@deerflow-ts/harness/models";
import { resolveAgentFactory } from "./agent-source";
import { FixedError } from "./common";
import type { CommonOptions } from "./common";

/** What `run` and `chat` ask of the client they open. */
export interface ClientSetup {
  modelName?: string;
  planMode?: boolean;
  subagentEnabled?: boolean;
  /** `--thread`: must name a thread of this data dir. */
  threadId?: string;
}

/**
 * Open the client `run` and `chat` work on and check everything a first
 * message would trip over, before the command prints or reads anything: the
 * config (found, valid, its variables set), the runtime it opens (stores,
 * sandbox provider), that a model is configured, that `--model` names one of
 * them, and that `--thread` names a known thread. The client is closed again
 * when a check fails.
 */
export async function openCheckedClient(common: CommonOptions, setup: ClientSetup): Promise<DeerFlowClient> {
  const agentFactory = await resolveAgentFactory();
  const options: DeerFlowClientOptions = {
    configPath: common.configPath,
    dataDir: common.dataDir,
    cwd: common.cwd,
    modelName: setup.modelName,
    planMode: setup.planMode,
    subagentEnabled: setup.subagentEnabled,
    agentFactory,
  };
  const client = new DeerFlowClient(options);
  try {
    await client.runtime();
    const models = client.appConfig?.models;
    // An injected agent (tests, embedding) needs no model entry; the built-in agent does.
    if (models && !models.length && !agentFactory) {
      throw new ModelConfigError("No chat models are configured. Add at least one entry under `models:` in config.yaml.", { code: "model_none_configured" });
    }
    if (setup.modelName && models) {
      const unknown = unknownModelError(setup.modelName, models);
      if (unknown) throw unknown;
    }
    if (setup.threadId) await assertKnownThread(client, setup.threadId, common.dataDir);
    return client;
  } catch (err) {
    await client.close();
    throw err;
  }
}

/** `--thread ID` continues a thread: an id this data dir does not know is an error, never a silent new thread. */
async function assertKnownThread(client: DeerFlowClient, threadId: string, dataDir: string): Promise<void> {
  try {
    await client.getThread(threadId);
  } catch (err) {
    if (err instanceof DeerFlowError && err.code === "thread_not_found") {
      throw new FixedError(
        `Thread ${threadId} not found in ${dataDir}.`,
        "`deerflow threads` lists the threads of this data dir (pass --data-dir or --config for another project); leave out --thread to start a new thread.",
      );
    }
    throw err;
  }
}
