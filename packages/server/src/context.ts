import type { ResolvedGatewayOptions } from "./options";
import type { RunManager } from "./runs/run-manager";
import type { GatewayStores } from "./store/types";

/** What every route module receives. */
export interface GatewayContext {
  options: ResolvedGatewayOptions;
  stores: GatewayStores;
  runs: RunManager;
}
