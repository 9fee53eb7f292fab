export { linkSignals } from "./linked-signal";
export type { LinkedSignal } from "./linked-signal";
