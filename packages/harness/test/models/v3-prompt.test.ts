import { describe, expect, it } from "vitest";
import { aiMessage, toolMessage } from "../../src/messages";
import { toV3Prompt } from "../../src/models";

const PNG = "iVBORw0KGgo=";

function toolTurn(status: "success" | "error" = "success") {
  return [
    aiMessage("", { tool_calls: [{ id: "c1", name: "mcp_screenshot", args: {}, type: "tool_call" }] }),
    toolMessage(
      [
        { type: "text", text: "Screenshot of the page" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
      ] as never,
      { tool_call_id: "c1", name: "mcp_screenshot", status },
    ),
  ];
}

describe("tool results with images", () => {
  it("reach Anthropic as tool_result content (text + image data)", () => {
    const prompt = toV3Prompt(toolTurn(), { providerKey: "anthropic" });
    const tool = prompt.find((m) => m.role === "tool")!;
    expect((tool.content[0] as { output: unknown }).output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "Screenshot of the page" },
        { type: "image-data", data: PNG, mediaType: "image/png" },
      ],
    });
  });

  it("stay text for chat-completions style providers (no base64 serialised into the text) and for errors", () => {
    for (const providerKey of ["openai", "openaiCompatible"]) {
      const tool = toV3Prompt(toolTurn(), { providerKey }).find((m) => m.role === "tool")!;
      expect((tool.content[0] as { output: unknown }).output).toEqual({ type: "text", value: "Screenshot of the page" });
    }
    const failed = toV3Prompt(toolTurn("error"), { providerKey: "anthropic" }).find((m) => m.role === "tool")!;
    expect((failed.content[0] as { output: { type: string } }).output.type).toBe("error-text");
  });
});
