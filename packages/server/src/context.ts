import type { DeerFlowRuntime, PersistenceStores, RunService } from "@deerflow-ts/harness";
import type { AuthRuntime } from "./auth/service";
import type { ResolvedGatewayOptions } from "./options";

/** What every route module receives. */
export interface GatewayContext {
  options: ResolvedGatewayOptions;
  /** The runtime's stores (thread rows, run records, transcripts). */
  stores: PersistenceStores;
  /** The runtime's run service. */
  runs: RunService;
  /** The harness runtime the gateway serves: state reads, thread deletion, agents, config. */
  runtime: DeerFlowRuntime;
  /** Sign-in: settings, the account store, the clock. Routes read the caller with `userOf(c)`, not from here. */
  auth: AuthRuntime;
}
