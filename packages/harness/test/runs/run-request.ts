import { humanMessage } from "../../src/messages";
import type { RunRequest } from "../../src/runs";

/**
 * A run request of user `u1` on the lead agent with one human message, as
 * the gateway's request parsing would hand it to the run service; `extra`
 * overrides any field (e.g. `streamModes`, `strategy`, `context`).
 */
export function runRequest(threadId: string, text: string, extra: Partial<RunRequest> = {}): RunRequest {
  return {
    threadId,
    userId: "u1",
    assistantId: "lead_agent",
    input: { messages: [humanMessage(text)] },
    settings: { isPlanMode: false, subagentEnabled: false, maxConcurrentSubagents: 3, isBootstrap: false, nonInteractive: false, disableClarification: false, userId: "u1" },
    recursionLimit: 25,
    streamModes: ["values", "messages"],
    context: {},
    configurable: {},
    metadata: {},
    kwargs: {},
    ...extra,
  };
}
