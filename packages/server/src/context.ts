import type { ResolvedGatewayOptions } from "./options";
import type { RunManager } from "./runs/run-manager";
import type { PersistenceStores } from "@deerflow/harness";

/** What every route module receives. */
export interface GatewayContext {
  options: ResolvedGatewayOptions;
  stores: PersistenceStores;
  runs: RunManager;
}
