/**
 * @deerflow/harness — the agent harness (no HTTP). Public API.
 * Subsystems are re-exported by name; see each folder's index.ts.
 */
export * as errors from "./errors";
