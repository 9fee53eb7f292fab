import { errorMessage } from "../errors";
import { toolMessage } from "../messages";
import type { ToolCall } from "../messages";
import { isCommand } from "../state";
import { isAbortError, isGraphInterrupt } from "./interrupt";
import type { GraphInterrupt } from "./interrupt";
import type { RunTask, TaskEvents } from "./task-events";
import type { Interrupt, ToolCallResult } from "./types";

/**
 * Sort a tools step's settled calls into results and interrupts, ending each call's task as it ended: answered
 * (its writes), paused (its interrupt) or failed (an error tool message the model can read). Calls with
 * arguments that did not parse get an error answer. A cancellation is rethrown: the step is abandoned.
 */
export function settleToolCalls(
  settled: PromiseSettledResult<ToolCallResult>[],
  calls: readonly ToolCall[],
  invalid: ReadonlyArray<{ id: string; name: string; error: string }>,
  tasks: { events: TaskEvents; byCall: ReadonlyMap<string, RunTask> },
): { results: ToolCallResult[]; interrupts: Interrupt[] } {
  const interrupts: Interrupt[] = [];
  const results: ToolCallResult[] = [];
  settled.forEach((s, i) => {
    const call = calls[i];
    const task = tasks.byCall.get(call.id);
    if (s.status === "fulfilled") {
      if (task) tasks.events.finish(task, isCommand(s.value) ? s.value.update : { messages: [s.value] });
      results.push(s.value);
    } else if (isGraphInterrupt(s.reason)) {
      const interrupt = (s.reason as GraphInterrupt).interrupt;
      if (task) tasks.events.finish(task, null, undefined, [interrupt]);
      interrupts.push(interrupt);
    } else {
      if (task) tasks.events.finish(task, null, s.reason);
      if (isAbortError(s.reason)) throw s.reason;
      results.push(toolMessage(`Error: Tool '${call.name}' failed: ${errorMessage(s.reason)}`, { tool_call_id: call.id, name: call.name, status: "error" }));
    }
  });
  for (const bad of invalid) {
    results.push(
      toolMessage(`Error: Invalid arguments for tool '${bad.name}': ${bad.error}. Call the tool again with valid JSON arguments.`, {
        tool_call_id: bad.id,
        name: bad.name || "unknown",
        status: "error",
      }),
    );
  }
  return { results, interrupts };
}
