import { z } from "zod";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";

/** Name of the clarification tool. */
export const ASK_CLARIFICATION_TOOL_NAME = "ask_clarification";

/** The five clarification kinds (each has an icon in the formatted question). */
export const CLARIFICATION_TYPES = [
  "missing_info",
  "ambiguous_requirement",
  "approach_choice",
  "risk_confirmation",
  "suggestion",
] as const;

/** Form field types of a v2 (form) clarification. */
export const CLARIFICATION_FIELD_TYPES = ["text", "textarea", "number", "select", "multi_select", "checkbox", "date"] as const;

const fieldSchema = z.object({
  name: z.string().describe("Unique identifier of the field (avoid JavaScript prototype names like `constructor`)."),
  label: z.string().optional().describe("Display text, defaults to name."),
  type: z.enum(CLARIFICATION_FIELD_TYPES).optional().describe("Field type; defaults to text."),
  required: z.boolean().optional().describe("Whether the field must be filled (default false)."),
  options: z.array(z.string()).optional().describe("Choices, required for select/multi_select."),
  placeholder: z.string().optional().describe("Optional hint text."),
});

/** Arguments of `ask_clarification`. */
export const askClarificationSchema = z.object({
  question: z.string().describe("The clarification question to ask the user. Be specific and clear."),
  clarification_type: z
    .enum(CLARIFICATION_TYPES)
    .describe("The type of clarification needed (missing_info, ambiguous_requirement, approach_choice, risk_confirmation, suggestion)."),
  context: z
    .string()
    .nullish()
    .describe("Optional context explaining why clarification is needed. Helps the user understand the situation."),
  options: z
    .array(z.string())
    .nullish()
    .describe("Optional list of choices (for approach_choice or suggestion types). Present clear options for the user to choose from."),
  fields: z
    .array(fieldSchema)
    .nullish()
    .describe(
      "Optional form field definitions for collecting multiple values in one card; takes precedence over `options`. " +
        "Keep forms bounded: at most 16 fields, 24 options per field, and 200 characters per name/label/option/placeholder — " +
        "exceeding a limit degrades the whole request to a plain-text question.",
    ),
});

const DESCRIPTION = `Ask the user for clarification when you need more information to proceed.

Use this tool when you encounter situations where you cannot proceed without user input:

- **Missing information**: Required details not provided (e.g., file paths, URLs, specific requirements)
- **Ambiguous requirements**: Multiple valid interpretations exist
- **Approach choices**: Several valid approaches exist and you need user preference
- **Risky operations**: Destructive actions that need explicit confirmation (e.g., deleting files, modifying production)
- **Suggestions**: You have a recommendation but want user approval before proceeding

The execution will be interrupted and the question will be presented to the user.
Wait for the user's response before continuing.

Choosing the interaction shape:
- One open question -> just \`question\` (free text input)
- Pick exactly one option -> \`options\`
- Pick several options -> a single \`fields\` entry of type \`multi_select\`
- Collect several values at once -> \`fields\`, which renders a single structured form instead of several sequential questions.

Best practices:
- Ask ONE clarification at a time for clarity; a form with several fields still counts as one clarification
- Be specific and clear in your question
- Don't make assumptions when clarification is needed
- For risky operations, ALWAYS ask for confirmation
- After calling this tool, execution will be interrupted automatically`;

/**
 * The `ask_clarification` built-in (`return_direct`). Its execution is a
 * placeholder: ClarificationMiddleware intercepts every call before it runs.
 */
export const askClarificationTool: ToolDefinition<z.output<typeof askClarificationSchema>> = tool({
  name: ASK_CLARIFICATION_TOOL_NAME,
  description: DESCRIPTION,
  schema: askClarificationSchema,
  returnDirect: true,
  execute: () => "Clarification request processed by middleware",
});

/**
 * Drop `ask_clarification` for non-interactive runs (scheduled tasks): the
 * lead agent calls this with the run's `non_interactive` flag.
 */
export function withoutClarificationTool<T extends { name: string }>(tools: readonly T[], nonInteractive: boolean): T[] {
  return nonInteractive ? tools.filter((t) => t.name !== ASK_CLARIFICATION_TOOL_NAME) : [...tools];
}
