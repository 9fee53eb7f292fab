import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { BASH_SUBAGENT_DISABLED_MESSAGE, mergeSkillAllowlists, resolveSubagentModelName, SubagentRegistry } from "../../src/subagents";

describe("SubagentRegistry", () => {
  it("lists built-ins with DeerFlow's defaults and hides bash without isolated bash", () => {
    const r = new SubagentRegistry({ bashAllowed: false });
    expect(r.availableNames()).toEqual(["general-purpose", "planner", "researcher", "coder", "reviewer"]);
    expect(r.get("general-purpose")).toMatchObject({ maxTurns: 150, timeoutSeconds: 1800, model: "inherit", tools: null, disallowedTools: ["task", "ask_clarification", "present_files"] });
    expect(r.get("bash")).toMatchObject({ maxTurns: 60, tools: ["bash", "ls", "read_file", "write_file", "str_replace"] });
    expect(r.refusal("bash")).toBe(BASH_SUBAGENT_DISABLED_MESSAGE);
    expect(new SubagentRegistry({ bashAllowed: true }).availableNames()).toContain("bash");
  });

  it("applies global limits to built-ins only, per-agent overrides to all, and loads custom agents", () => {
    const r = new SubagentRegistry({
      bashAllowed: true,
      config: {
        timeout_seconds: 600,
        max_turns: 40,
        agents: { "general-purpose": { model: "fast", max_turns: 12 }, analyst: { timeout_seconds: 99, token_budget: { max_tokens: 5000 }, skills: ["charts"] } },
        custom_agents: { analyst: { description: "Analyses data", system_prompt: "You analyse.", tools: ["read_file"] } },
      },
    });
    expect(r.get("general-purpose")).toMatchObject({ model: "fast", maxTurns: 12, timeoutSeconds: 600 });
    expect(r.get("bash")).toMatchObject({ maxTurns: 40, timeoutSeconds: 600 });
    expect(r.get("analyst")).toMatchObject({ source: "custom", maxTurns: 50, timeoutSeconds: 99, tools: ["read_file"], skills: ["charts"], tokenBudget: { max_tokens: 5000 }, model: "inherit" });
    expect(r.availableNames()).toContain("analyst");
    expect(resolveSubagentModelName(r.get("general-purpose")!, "parent")).toBe("fast");
    expect(resolveSubagentModelName(r.get("analyst")!, "parent")).toBe("parent");
    expect(resolveSubagentModelName(r.get("analyst")!, null, "first")).toBe("first");
  });

  it("rejects invalid custom agents with a ConfigError naming the key", () => {
    expect(() => new SubagentRegistry({ bashAllowed: false, config: { custom_agents: { x: { description: "d" } } } })).toThrow(ConfigError);
    expect(() => new SubagentRegistry({ bashAllowed: false, config: { custom_agents: { x: { description: "d" } } } })).toThrow(/subagents\.custom_agents\.x: system_prompt/);
    expect(() => new SubagentRegistry({ bashAllowed: false, config: { custom_agents: { bash: { description: "d", system_prompt: "p" } } } })).toThrow(/built-in/);
    expect(() => new SubagentRegistry({ bashAllowed: false, config: { agents: { coder: { max_turns: -1 } } } })).toThrow(/subagents\.agents\.coder/);
  });

  it("keeps a child's skills within its parent's allowlist", () => {
    expect(mergeSkillAllowlists(null, null)).toBeNull();
    expect(mergeSkillAllowlists(null, ["a"])).toEqual(["a"]);
    expect(mergeSkillAllowlists(["a", "b"], null)).toEqual(["a", "b"]);
    expect(mergeSkillAllowlists(["a", "b"], ["b", "c"])).toEqual(["b"]);
  });
});
