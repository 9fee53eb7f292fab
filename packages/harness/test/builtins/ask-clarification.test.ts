import { describe, expect, it } from "vitest";
import { askClarificationTool, withoutClarificationTool } from "../../src/builtins/ask-clarification";

describe("ask_clarification tool", () => {
  it("has DeerFlow's schema and is return_direct", () => {
    expect(askClarificationTool.name).toBe("ask_clarification");
    expect(askClarificationTool.returnDirect).toBe(true);
    const p = askClarificationTool.parameters as any;
    expect(p.required).toEqual(["question", "clarification_type"]);
    expect(p.properties.clarification_type.enum).toEqual(["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"]);
    expect(p.properties.fields.anyOf[0].items.properties.type.enum).toEqual(["text", "textarea", "number", "select", "multi_select", "checkbox", "date"]);
    expect(askClarificationTool.schema.safeParse({ question: "q", clarification_type: "nope" }).success).toBe(false);
  });
  it("non_interactive runs drop the tool", () => {
    const tools = [{ name: "bash" }, askClarificationTool];
    expect(withoutClarificationTool(tools, true).map((t) => t.name)).toEqual(["bash"]);
    expect(withoutClarificationTool(tools, false)).toHaveLength(2);
  });
});
