import { z } from "zod";
import type { JsonSchema } from "../models/types";
import type { ToolDefinition, ToolResult, ToolRuntime } from "./types";

/** Options of {@link tool}. */
export interface ToolOptions<S extends z.ZodType> {
  name: string;
  description: string;
  schema: S;
  returnDirect?: boolean;
  timeoutMs?: number;
  /** `false`: the tool only reads (see {@link ToolDefinition.sideEffects}). */
  sideEffects?: boolean;
  metadata?: Record<string, unknown>;
  execute(args: z.output<S>, runtime: ToolRuntime): Promise<ToolResult> | ToolResult;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Convert a zod schema to the JSON schema a model sees (no `$schema` key). */
export function zodToJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: "draft-7", io: "input", unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  if (json.type === "object" && json.additionalProperties === false) delete json.additionalProperties;
  return json;
}

/**
 * JSON schemas already derived, per zod schema object. Tool factories run for
 * every agent built (the lead agent is built per run) on module-level
 * schemas, and deriving one is the costliest part of building the agent.
 * The derived schema is shared read-only, as it already is by every model
 * call of a run.
 */
const derivedSchemas = new WeakMap<z.ZodType, JsonSchema>();

function toolParameters(schema: z.ZodType): JsonSchema {
  let json = derivedSchemas.get(schema);
  if (!json) {
    json = zodToJsonSchema(schema);
    derivedSchemas.set(schema, json);
  }
  return json;
}

/**
 * Define a tool once with a zod schema. The JSON schema is derived for the
 * model; arguments are validated before `execute` is called (invalid
 * arguments become an error tool message, never an exception).
 */
export function tool<S extends z.ZodType>(options: ToolOptions<S>): ToolDefinition<z.output<S>> {
  if (!TOOL_NAME.test(options.name)) {
    throw new TypeError(`Invalid tool name '${options.name}': use 1-64 letters, digits, '_' or '-'`);
  }
  if (!options.description?.trim()) throw new TypeError(`Tool '${options.name}' needs a description`);
  const parameters = toolParameters(options.schema);
  if (parameters.type !== "object") {
    throw new TypeError(`Tool '${options.name}': schema must be a zod object (got ${String(parameters.type)})`);
  }
  return {
    name: options.name,
    description: options.description,
    schema: options.schema as unknown as z.ZodType<z.output<S>>,
    parameters,
    returnDirect: options.returnDirect,
    timeoutMs: options.timeoutMs,
    ...(options.sideEffects === false ? { sideEffects: false } : {}),
    metadata: options.metadata,
    execute: options.execute,
  };
}

/** The spec a provider needs for a tool. */
export function toToolSpec(def: ToolDefinition): { name: string; description: string; parameters: JsonSchema } {
  return { name: def.name, description: def.description, parameters: def.parameters };
}

/** Human-readable summary of a zod validation error (for the model to fix its call). */
export function formatZodError(err: z.ZodError): string {
  return err.issues
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}
