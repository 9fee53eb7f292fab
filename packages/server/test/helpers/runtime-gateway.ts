import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startServer } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";

/** A real runtime from config.yaml text and the gateway serving it on a free loopback port. */
export interface RuntimeGateway {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** `${url}/api`. */
  api: string;
  /** The data dir (a temporary one is removed by `close`; one passed in is kept). */
  dataDir: string;
  runtime: DeerFlowRuntime;
  gateway: Gateway;
  /** Stop the gateway, close the runtime, remove the data dir. */
  close(): Promise<void>;
}

/**
 * Start the runtime a user's `config.yaml` would give (`configLines`, one YAML
 * line each) in a fresh temporary data dir (or `options.dataDir`, e.g. to
 * start again on the same one), and the gateway in front of it (no web UI,
 * silent logs): the end-to-end setup of the route tests.
 */
export async function startRuntimeGateway(configLines: readonly string[], prefix = "gw-e2e-", options: { dataDir?: string } = {}): Promise<RuntimeGateway> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const { config } = appConfigFromText([...configLines, ""].join("\n"));
  const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
  const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  return {
    url,
    api: `${url}/api`,
    dataDir,
    runtime,
    gateway,
    async close() {
      await gateway.close();
      await runtime.close();
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
