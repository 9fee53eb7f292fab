import { z } from "zod";
import { errorMessage } from "../errors";
import { humanMessage, toolMessage } from "../messages";
import type { AIMessage, Message, ToolMessage } from "../messages";
import type { Agent, AgentMiddleware } from "../runtime/types";
import { ensureRunSandbox } from "../sandbox";
import type { Sandbox, SandboxProvider } from "../sandbox";
import type { SandboxState, ThreadDataState } from "../state";
import { tool } from "../tools";
import type { ToolDefinition, ToolRuntime } from "../tools/types";
import { checkAcceptanceCriteria, renderAcceptanceChecklist, sanitizeAcceptanceCriteria } from "./acceptance-checks";
import type { AcceptanceVerdict } from "./acceptance-checks";
import { recordedBashExecutions } from "./acceptance-tests-passed";
import { parentContextSnapshotMessage, SNAPSHOT_AUTHORITY_NOTE } from "./context-snapshot";
import { SubagentExecutor } from "./executor";
import { SubagentRegistry, resolveSubagentModelName } from "./registry";
import { bindRunChild } from "./run-child";
import type { RunChildFn } from "./run-child";
import { formatSubagentResultMessage, makeSubagentAdditionalKwargs, SUBAGENT_ACCEPTANCE_VERDICT_KEY } from "./status-contract";
import type { SubagentStatusValue, SubagentTokenUsage } from "./status-contract";
import type { SubagentConfig, SubagentResult } from "./types";

/** What a child-agent factory is asked to build. */
export interface ChildAgentSpec {
  config: SubagentConfig;
  /** The effective model name (`inherit` resolved); undefined = the factory's default model. */
  modelName: string | undefined;
  /** The tools the child may use (already filtered). */
  tools: ToolDefinition[];
  /** The child's own system prompt. */
  systemPrompt: string;
  /** Middlewares the executor needs (turn cap, progress probe): place them FIRST in the chain. */
  middleware: AgentMiddleware[];
}

/** Builds the agent of one sub-agent execution. */
export type ChildAgentFactory = (spec: ChildAgentSpec) => Agent | Promise<Agent>;

/** Options of {@link createTaskTool}. */
export interface TaskToolOptions {
  registry: SubagentRegistry;
  /** The parent's tools (types inherit from them; `task`, `ask_clarification`, `present_files` are always removed). */
  parentTools: readonly ToolDefinition[] | (() => readonly ToolDefinition[]);
  /** The parent's model name (what `inherit` resolves to). */
  parentModelName?: string;
  createChildAgent: ChildAgentFactory;
  /** Shared executor (default: one over the process-wide admission gate). */
  executor?: SubagentExecutor;
  /** The thread's sandbox provider: a lease for each child, and the files acceptance criteria read. */
  sandboxProvider?: SandboxProvider;
  /** How to start a nested run from a tool call (default: {@link bindRunChild}; the runtime's `runChild` fits). */
  runChildFor?(runtime: ToolRuntime): RunChildFn;
}

const schema = z.object({
  description: z.string().describe("A short (3-5 word) label of the task for progress display. Give it first."),
  prompt: z.string().describe("The complete, self-contained task for the sub-agent: goal, inputs (file paths), expected output and where to write files."),
  subagent_type: z.string().describe("Which sub-agent type runs the task (see the list in this tool's description)."),
  context_mode: z
    .enum(["isolated", "snapshot"])
    .optional()
    .describe("isolated (default): the sub-agent sees only this task. snapshot: it also gets a read-only copy of this conversation as background."),
  acceptance_criteria: z
    .array(z.string())
    .optional()
    .describe(
      "Deterministic checks run after the sub-agent completes: 'file:<path> exists|non-empty|json-valid|csv-columns:<a,b>', 'file_written:<path>', 'tests_passed:<command>'. Each is reported as holds / does not hold / UNVERIFIED.",
    ),
  max_turns: z.number().int().positive().optional().describe("Lower the type's cap on model turns for this task (it cannot be raised here)."),
});

/** Arguments of the `task` tool. */
export type TaskToolArgs = z.output<typeof schema>;

function describeTool(registry: SubagentRegistry): string {
  const types = registry
    .available()
    .map((t) => `- ${t.name}: ${t.description}`)
    .join("\n");
  return [
    "Delegate one bounded task to a sub-agent that works in its own context and returns a report. Several task calls in one response run in parallel.",
    "Delegate when it clearly pays: independent parts of the work that can run at the same time, a specialist type, or a context-heavy investigation that would crowd this conversation. Do the work yourself when it is small, strictly sequential, needs the user, or would touch the same files as another task.",
    "The sub-agent cannot ask questions: give it everything it needs in `prompt`, including file paths and where to write its output.",
    `Sub-agent types:\n${types}`,
  ].join("\n\n");
}

function taskMessage(prompt: string, criteria: string[]): Message {
  if (!criteria.length) return humanMessage(prompt);
  const list = criteria.map((c) => `- ${c}`).join("\n");
  return humanMessage(
    `${prompt}\n\n<acceptance_criteria>\nAfter you finish, these are checked deterministically against the thread's files and your recorded commands:\n${list}\n</acceptance_criteria>`,
  );
}

/**
 * Never inherited, whatever the type says: no nested delegation, no upload
 * listing (a child's state has no `uploaded_files`), no agent self-editing.
 */
const NEVER_INHERITED = ["task", "list_uploaded_files", "setup_agent", "update_agent"];

function childTools(config: SubagentConfig, parent: readonly ToolDefinition[]): ToolDefinition[] {
  const deny = new Set<string>([...NEVER_INHERITED, ...config.disallowedTools]);
  const allow = config.tools ? new Set(config.tools) : undefined;
  return parent.filter((t) => !deny.has(t.name) && (!allow || allow.has(t.name)));
}

/** Record the child's usage on the parent run once, as caller `subagent:<type>`. */
function reportUsage(runtime: ToolRuntime, type: string, usage: SubagentTokenUsage): void {
  runtime.outcome?.recordUsage(`subagent:${type}`, usage, { calls: 1 });
}

function resultMessage(
  call: { id: string },
  status: SubagentStatusValue,
  fields: { result?: string; error?: string; stopReason?: SubagentResult["stopReason"]; modelName?: string; usage?: SubagentTokenUsage; verdict?: AcceptanceVerdict; text?: string },
): ToolMessage {
  const kwargs = makeSubagentAdditionalKwargs(status, {
    result: fields.result,
    error: fields.error,
    stopReason: fields.stopReason,
    modelName: fields.modelName,
    tokenUsage: fields.usage,
  });
  if (fields.verdict) kwargs[SUBAGENT_ACCEPTANCE_VERDICT_KEY] = fields.verdict;
  const text = fields.text ?? formatSubagentResultMessage(status, { result: fields.result, error: fields.error, stopReason: fields.stopReason });
  return toolMessage(text, { tool_call_id: call.id, name: "task", status: status === "completed" ? "success" : "error", additional_kwargs: kwargs });
}

async function acceptanceSandbox(provider: SandboxProvider | undefined, runtime: ToolRuntime): Promise<Sandbox | undefined> {
  if (!provider) return undefined;
  try {
    return await ensureRunSandbox(provider, runtime.context);
  } catch {
    return undefined; // file criteria then report UNVERIFIED
  }
}

/**
 * DeerFlow's `task` tool: validates the type and arguments, builds the
 * child (tools filtered from the parent's, own system prompt, optional
 * parent snapshot), runs it through the executor as a nested run
 * (`task:<tool_call_id>` namespace), streams `task_started` /
 * `task_running` / `task_completed|failed|cancelled|timed_out`, checks
 * acceptance criteria on completion, reports the child's usage to the
 * parent's outcome once, and returns the result contract ToolMessage. Bad
 * input and child failures are failed results the model can read, never
 * exceptions.
 */
export function createTaskTool(options: TaskToolOptions): ToolDefinition<TaskToolArgs> {
  const registry = options.registry;
  const executor = options.executor ?? new SubagentExecutor();
  const parentTools = typeof options.parentTools === "function" ? options.parentTools : () => options.parentTools as readonly ToolDefinition[];
  return tool({
    name: "task",
    description: describeTool(registry),
    schema,
    metadata: { group: "subagent" },
    async execute(args, runtime) {
      const call = { id: runtime.toolCallId };
      const config = registry.get(args.subagent_type);
      if (!config) {
        return resultMessage(call, "failed", { error: `Unknown subagent type '${args.subagent_type}'. Available: ${registry.availableNames().join(", ")}` });
      }
      const refusal = registry.refusal(config.name);
      if (refusal) return resultMessage(call, "failed", { error: refusal });
      const prompt = args.prompt.trim();
      if (!prompt) {
        return resultMessage(call, "failed", {
          error: "The task prompt is empty. Call `task` again with a complete, self-contained prompt (goal, inputs, expected output).",
        });
      }
      const criteria = sanitizeAcceptanceCriteria(args.acceptance_criteria);
      const modelName = resolveSubagentModelName(config, options.parentModelName);
      const maxTurns = Math.min(config.maxTurns, args.max_turns ?? config.maxTurns);
      const snapshot = args.context_mode === "snapshot";
      const parentState = runtime.state as { messages: Message[]; summary_text?: string | null; sandbox?: SandboxState | null; thread_data?: ThreadDataState | null };
      // Serialised now, at dispatch: later changes to the parent state never reach the child.
      const messages: Message[] = [...(snapshot ? [parentContextSnapshotMessage(parentState)] : []), taskMessage(prompt, criteria)];
      const tools = childTools(config, parentTools());
      const description = args.description.trim() || prompt.slice(0, 60);
      runtime.writer({ type: "task_started", task_id: call.id, description, model_name: modelName ?? null });

      const runChild = options.runChildFor ? options.runChildFor(runtime) : bindRunChild(runtime);
      const result = await executor.execute({
        taskId: call.id,
        buildAgent: (middleware) =>
          options.createChildAgent({
            config,
            modelName,
            tools,
            systemPrompt: snapshot ? `${config.systemPrompt}\n\n${SNAPSHOT_AUTHORITY_NOTE}` : config.systemPrompt,
            middleware,
          }),
        messages,
        initialState: { sandbox: parentState.sandbox ?? null, thread_data: parentState.thread_data ?? null },
        maxTurns,
        timeoutSeconds: config.timeoutSeconds,
        signal: runtime.signal,
        runChild: (agent, input, o) => runChild(agent, input, { ...o, sandboxProvider: options.sandboxProvider }),
        onAiMessage: (message: AIMessage, index: number, usage: SubagentTokenUsage) =>
          runtime.writer({ type: "task_running", task_id: call.id, message, message_index: index, total_messages: index, usage, model_name: modelName ?? null }),
      });
      reportUsage(runtime, config.name, result.usage);

      let verdict: AcceptanceVerdict | undefined;
      let text: string | undefined;
      if (result.status === "completed" && criteria.length) {
        try {
          verdict = await checkAcceptanceCriteria(criteria, {
            sandbox: await acceptanceSandbox(options.sandboxProvider, runtime),
            bashExecutions: recordedBashExecutions(result.finalState?.messages ?? []),
          });
          text = `${formatSubagentResultMessage("completed", { result: result.result, stopReason: result.stopReason })}\n\n${renderAcceptanceChecklist(verdict)}`;
        } catch (err) {
          // Failure-isolated: the result still reaches the lead, without a checklist.
          console.warn(`[deerflow] acceptance checks failed for task ${call.id}: ${errorMessage(err)}`);
        }
      }
      const usage = result.usage;
      const model_name = modelName ?? null;
      if (result.status === "completed") runtime.writer({ type: "task_completed", task_id: call.id, result: result.result, usage, model_name });
      else runtime.writer({ type: `task_${result.status}`, task_id: call.id, error: result.error ?? null, usage, model_name });
      return resultMessage(call, result.status, {
        result: result.result,
        error: result.error,
        stopReason: result.stopReason,
        modelName,
        usage,
        verdict,
        text,
      });
    },
  });
}
