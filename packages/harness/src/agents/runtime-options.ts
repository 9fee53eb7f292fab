// The run settings are the runtime's (tools and middlewares read them from their run context); the lead agent's
// name for them stays here.
export { readRuntimeOptions, runSettings } from "../runtime/run-settings";
export type { LeadRuntimeOptions } from "../runtime/run-settings";
