import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildLeadMiddlewares, createDeerflowAgent, createSharedLeadMiddlewares, MIDDLEWARE_ORDER, orderChain } from "../../src/agents";
import { appConfigFromText } from "../../src/config";
import { createGuardrailMiddleware } from "../../src/middlewares";
import { AllowlistProvider } from "../../src/guardrails";
import { LocalSandboxProvider } from "../../src/sandbox";
import { ScriptedModel } from "../../src/testing";

const named = (name: string) => ({ name });

describe("one chain order for the lead agent, sub-agents and the SDK factory", () => {
  it("orderChain puts DeerFlow's middlewares in canonical order and leaves programmatic ones at the custom slot", () => {
    const shuffled = ["ClarificationMiddleware", "Mine", "ThreadDataMiddleware", "TokenBudgetMiddleware", "TerminalResponseMiddleware", "InputSanitizationMiddleware"].map(named);
    expect(orderChain(shuffled).map((m) => m.name)).toEqual([
      "InputSanitizationMiddleware",
      "ThreadDataMiddleware",
      "TokenBudgetMiddleware",
      "Mine",
      "TerminalResponseMiddleware",
      "ClarificationMiddleware",
    ]);
  });

  it("every middleware the lead chain builds (all features on) is one of the canonical ones, in canonical order", () => {
    const baseDir = mkdtempSync(path.join(tmpdir(), "df-chain-"));
    const { config } = appConfigFromText(
      ["models: []", "summarization: { enabled: true }", "token_budget: { enabled: true }", "guardrails: { enabled: true, provider: { use: allowlist, config: { allowed_tools: [bash] } } }", ""].join("\n"),
    );
    const provider = new LocalSandboxProvider(undefined, { baseDir });
    for (const subagent of [false, true]) {
      const chain = buildLeadMiddlewares({
        config,
        baseDir,
        provider,
        shared: createSharedLeadMiddlewares(config),
        isPlanMode: true,
        supportsVision: true,
        resolveModel: () => new ScriptedModel([]),
        subagent,
      });
      const names = chain.map((m) => m.name);
      expect(names.filter((n) => !MIDDLEWARE_ORDER.includes(n))).toEqual([]);
      const ranks = names.map((n) => MIDDLEWARE_ORDER.indexOf(n));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    }
  });

  it("the SDK factory's chain is a subsequence of the same order", () => {
    const agent = createDeerflowAgent(new ScriptedModel([]), [], {
      baseDir: mkdtempSync(path.join(tmpdir(), "df-chain-sdk-")),
      planMode: true,
      features: { auto_title: true, vision: true, token_budget: true, guardrail: createGuardrailMiddleware({ provider: new AllowlistProvider({ allowed_tools: ["x"] }) }) },
    });
    const ranks = agent.middleware.map((m) => MIDDLEWARE_ORDER.indexOf(m.name));
    expect(ranks.every((r) => r >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });
});
