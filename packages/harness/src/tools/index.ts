export type { CustomEvent, NestedStreamEvent, RunContext, ToolDefinition, ToolResult, ToolRuntime } from "./types";
export { formatZodError, tool, toToolSpec, zodToJsonSchema } from "./tool";
export type { ToolOptions } from "./tool";
