import { describe, expect, it } from "vitest";
import { readRuntimeOptions } from "../../src/agents/runtime-options";

describe("readRuntimeOptions", () => {
  it("context overrides configurable; key presence counts even when false", () => {
    const o = readRuntimeOptions({ model_name: "a", thinking_enabled: true, is_plan_mode: true }, { model_name: "b", thinking_enabled: false });
    expect(o.modelName).toBe("b");
    expect(o.thinkingEnabled).toBe(false);
    expect(o.isPlanMode).toBe(true);
    expect(readRuntimeOptions({}, {}).thinkingEnabled).toBeUndefined();
    expect(readRuntimeOptions({ model: "m" }).modelName).toBe("m");
  });

  it("a key the context has wins even when undefined; only own keys count", () => {
    expect(readRuntimeOptions({ model_name: "a" }, { model_name: undefined, model: "c" }).modelName).toBe("c");
    expect(readRuntimeOptions({ is_plan_mode: true }, { is_plan_mode: undefined }).isPlanMode).toBe(false);
    // presence without a value still says "the request set it"
    expect(readRuntimeOptions({}, { thinking_enabled: undefined })).toHaveProperty("thinkingEnabled", undefined);
    const inherited = Object.create({ model_name: "from-prototype", is_plan_mode: true }) as Record<string, unknown>;
    expect(readRuntimeOptions(inherited, Object.create(inherited) as Record<string, unknown>)).toMatchObject({ modelName: undefined, isPlanMode: false });
    expect(readRuntimeOptions({ user_id: "u", thread_id: "t", run_id: "r" }, { user_id: "v" })).toMatchObject({ userId: "v", threadId: "t", runId: "r" });
  });

  it("clamps sub-agent limits and defaults the user", () => {
    expect(readRuntimeOptions({ max_concurrent_subagents: 9, max_total_subagents: 0 })).toMatchObject({ maxConcurrentSubagents: 4, maxTotalSubagents: 1, userId: "default" });
    expect(readRuntimeOptions({}).maxConcurrentSubagents).toBe(3);
  });

  it("rejects invalid values with the key name", () => {
    expect(() => readRuntimeOptions({ reasoning_effort: "max" })).toThrow(/reasoning_effort/);
    expect(() => readRuntimeOptions({ agent_name: "../x" })).toThrow(/agent_name/);
    expect(() => readRuntimeOptions({ is_plan_mode: "yes" })).toThrow(/is_plan_mode/);
  });
});
