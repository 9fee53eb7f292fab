import { z } from "zod";
import type { ToolMessage } from "../messages";
import { toolMessage } from "../messages";
import type { AgentMiddleware, ToolCallRequest } from "../runtime/types";
import { isCommand } from "../state";
import { isControlFlowError } from "./tool-error-handling-control-flow";
import { exceptionMeta, stampToolMeta, TOOL_META_KEY } from "./tool-error-handling-meta";
import { parseMiddlewareOptions } from "./zod-options";
import { makeSubagentAdditionalKwargs } from "../subagents/status-contract";

/** Hint appended to every exception-derived tool error. */
export const TOOL_ERROR_RECOVERY_HINT = "Continue with available context, or choose an alternative tool.";
const MAX_DETAIL = 500;

const optionsSchema = z.object({});
/** Options of {@link createToolErrorHandlingMiddleware} (none). */
export type ToolErrorHandlingOptions = z.input<typeof optionsSchema>;

function errorClassName(err: unknown): string {
  if (err instanceof Error) return err.constructor?.name && err.constructor.name !== "Object" ? err.constructor.name : err.name;
  return typeof err === "string" ? "Error" : typeof err;
}

function errorDetailText(err: unknown, className: string): string {
  const raw = err instanceof Error ? err.message : typeof err === "string" ? err : (() => {
    try {
      return JSON.stringify(err);
    } catch {
      return String(err);
    }
  })();
  const detail = (raw ?? "").trim() || className;
  return detail.length > MAX_DETAIL ? detail.slice(0, MAX_DETAIL - 3) + "..." : detail;
}

/** The error tool message for a tool call that threw. */
export function toolExceptionMessage(request: ToolCallRequest, err: unknown): ToolMessage {
  const name = String(request.toolCall.name || "unknown_tool");
  const className = errorClassName(err);
  const detail = errorDetailText(err, className);
  return toolMessage(`Error: Tool '${name}' failed with ${className}: ${detail}. ${TOOL_ERROR_RECOVERY_HINT}`, {
    tool_call_id: String(request.toolCall.id || "missing_tool_call_id"),
    name,
    status: "error",
    additional_kwargs: {
      [TOOL_META_KEY]: exceptionMeta(`${className}: ${detail}`),
      // A crashed `task` still reports the sub-agent status contract, so the ledger marks the delegation failed.
      ...(name === "task" ? makeSubagentAdditionalKwargs("failed", { error: `${className}: ${detail}` }) : {}),
    },
  });
}

/**
 * DeerFlow's ToolErrorHandlingMiddleware: a tool that throws becomes an error
 * tool message the model can recover from, instead of crashing the run.
 * Interrupts and cancellations are re-thrown. Every tool message result is
 * stamped with `additional_kwargs.deerflow_tool_meta`.
 */
export function createToolErrorHandlingMiddleware(options: ToolErrorHandlingOptions = {}): AgentMiddleware {
  parseMiddlewareOptions("ToolErrorHandlingMiddleware", optionsSchema, options);
  return {
    name: "ToolErrorHandlingMiddleware",
    async wrapToolCall(request, handler) {
      let result;
      try {
        result = await handler(request);
      } catch (err) {
        if (isControlFlowError(err, request.runtime?.signal)) throw err;
        return toolExceptionMessage(request, err);
      }
      return isCommand(result) ? result : stampToolMeta(result);
    },
  };
}
