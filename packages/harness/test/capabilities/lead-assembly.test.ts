/**
 * What the lead agent is built from when every capability is on (skills,
 * memory in tool mode, deferred MCP tools, sub-agents, web research): the
 * exact middleware chain, tool list and prompt sections. The lists below are
 * DeerFlow's order as the lead agent built it before capabilities plugged in
 * through one loop; they must not move.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { afterAll, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "../../src/agents";
import { LEAD_CAPABILITIES } from "../../src/capabilities";
import type { AgentBuildContext, Capability } from "../../src/capabilities";
import { appConfigFromText } from "../../src/config";
import { MemoryService } from "../../src/memory";
import { SkillRegistry } from "../../src/skills";
import { contentText, humanMessage } from "../../src/messages";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

const home = mkdtempSync(path.join(tmpdir(), "df-cap-lead-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const skillsPath = path.join(home, "skills");
mkdirSync(path.join(skillsPath, "public", "alpha"), { recursive: true });
writeFileSync(path.join(skillsPath, "public", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Alpha does research.\n---\n# Alpha\n");

const CONFIG = [
  "models: []",
  "sandbox: { use: local }",
  "tools:",
  "  - { name: ls, group: file:read, use: deerflow.sandbox.tools:ls_tool }",
  "  - { name: web_fetch, group: web, use: deerflow.community.jina_ai.tools:web_fetch_tool }",
  "  - { name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool }",
  "summarization: { enabled: true }",
  "token_budget: { enabled: true }",
  "guardrails: { enabled: true, provider: { use: allowlist, config: { allowed_tools: [ls] } } }",
  "tool_search: { enabled: true }",
  "memory: { mode: tool }",
  "skills: { deferred_discovery: true }",
  "",
].join("\n");

/** An MCP-shaped tool (what the pool returns), preferring itself for a keyword. */
const mcpTool = tool({
  name: "srv_lookup",
  description: "Look something up on srv.",
  schema: z.object({ q: z.string() }),
  metadata: { mcp: true, routing: { mode: "prefer", priority: 1, keywords: ["lookup"] } },
  execute: () => "ok",
});

const model = new ScriptedModel(["done"], { onExhausted: "repeat-last" });

/** Keeps the build context of the last agent, so a test can build that agent's sub-agent chain. */
let lastContext: AgentBuildContext | undefined;
const contextProbe: Capability<never, "probe"> = {
  name: "probe",
  forAgent: (ctx) => void (lastContext = ctx),
};

function factory() {
  const { config } = appConfigFromText(CONFIG);
  const memory = new MemoryService({ config: { mode: "tool" }, dataDir: home, logger: { warn: () => undefined } });
  const skills = new SkillRegistry({ skillsPath, dataDir: home });
  return createLeadAgentFactory({
    config,
    baseDir: home,
    extensions: { memory, skills },
    extraTools: [mcpTool],
    capabilities: [...LEAD_CAPABILITIES, contextProbe],
    modelFactory: () => ({
      model,
      warnings: [],
      config: { name: "scripted", supportsVision: true, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never,
    }),
    warn: () => undefined,
  });
}

const LEAD_CHAIN = [
  "InputSanitizationMiddleware",
  "ToolOutputBudgetMiddleware",
  "ToolResultSanitizationMiddleware",
  "ThreadDataMiddleware",
  "UploadsMiddleware",
  "SandboxMiddleware",
  "DanglingToolCallMiddleware",
  "LLMErrorHandlingMiddleware",
  "GuardrailMiddleware",
  "SandboxAuditMiddleware",
  "ReadBeforeWriteMiddleware",
  "ToolErrorHandlingMiddleware",
  "DynamicContextMiddleware",
  "SkillActivationMiddleware",
  "SkillToolPolicyMiddleware",
  "DurableContextMiddleware",
  "DeerFlowSummarizationMiddleware",
  "TodoMiddleware",
  "TokenUsageMiddleware",
  "TitleMiddleware",
  "MemoryMiddleware",
  "ViewImageMiddleware",
  "McpRoutingMiddleware",
  "DeferredToolFilterMiddleware",
  "SystemMessageCoalescingMiddleware",
  "SubagentLimitMiddleware",
  "LoopDetectionMiddleware",
  "TokenBudgetMiddleware",
  "TerminalResponseMiddleware",
  "ModelLengthFinishReasonMiddleware",
  "SafetyFinishReasonMiddleware",
  "ClarificationMiddleware",
];

/** The same chain in sub-agent form: without Uploads, DynamicContext, Todo, Title, Memory, SubagentLimit, Clarification. */
const SUBAGENT_CHAIN = LEAD_CHAIN.filter(
  (n) => !["UploadsMiddleware", "DynamicContextMiddleware", "TodoMiddleware", "TitleMiddleware", "MemoryMiddleware", "SubagentLimitMiddleware", "ClarificationMiddleware"].includes(n),
);

const LEAD_TOOLS = [
  "ls",
  "web_fetch",
  "read_file",
  "present_files",
  "ask_clarification",
  "list_uploaded_files",
  "view_image",
  "memory_search",
  "memory_add",
  "memory_update",
  "memory_delete",
  "srv_lookup",
  "tool_search",
  "task",
  "describe_skill",
  "write_todos",
];
/** The tools the model is offered: the deferred MCP tool stays hidden behind `tool_search`. */
const OFFERED_TOOLS = LEAD_TOOLS.filter((n) => n !== "srv_lookup");
/** sha256 of the leading system message (static prompt with skill index, deferred tools, MCP routing hints, sub-agents; plan mode; date). */
const PROMPT_SHA = "0351b0f3dff0ea03be53bc2837052ad3362b4033b21e249f93a662b6689701d8";

describe("the lead agent with every capability on", () => {
  it("builds DeerFlow's chain, tools and prompt exactly as before", async () => {
    const f = factory();
    const agent = await f.makeLeadAgent({ isPlanMode: true, subagentEnabled: true, maxConcurrentSubagents: 2 });
    expect(agent.middleware.map((m) => m.name)).toEqual(LEAD_CHAIN);
    expect(agent.tools.map((t) => t.name)).toEqual(LEAD_TOOLS);
    await agent.invoke({ messages: [humanMessage("hello")] }, { configurable: { thread_id: "t-assembly" }, context: { user_id: "default" } } as never);
    const request = model.requests[0]!;
    // The leading system message: the static prompt (+ the plan-mode prompt), the date made stable.
    const system = contentText(request.messages[0]!.content).replace(/<current_date>[^<]*<\/current_date>/g, "<current_date>DATE</current_date>");
    expect(request.tools.map((t) => t.name)).toEqual(OFFERED_TOOLS);
    for (const section of ["<skill_index>", "<available-deferred-tools>", "<mcp_routing_hints>", "<subagent_system>", "<todo_list_system>"]) expect(system).toContain(section);
    expect(createHash("sha256").update(system).digest("hex")).toBe(PROMPT_SHA);
    await f.close();
  });

  it("a sub-agent's chain keeps the capabilities' slots that apply to it (skills, deferred MCP tools) and drops the lead-only ones", async () => {
    const f = factory();
    await f.makeLeadAgent({ isPlanMode: true, subagentEnabled: true, maxConcurrentSubagents: 2 });
    const child = lastContext!.subagentChain({ subagent: true, skills: ["alpha"], tokenBudget: { max_tokens: 5000 } });
    expect(child.map((m) => m.name)).toEqual(SUBAGENT_CHAIN);
    await f.close();
  });
});
