import { describe, expect, it } from "vitest";
import { parseCsv } from "../src/artifacts/csv";
import { previewKind } from "../src/artifacts/preview-kind";
import { artifactUrl } from "../src/api/rest";
import { hasMath, markdownToHtml } from "../src/markdown/render";
import { hasCodeFence, loadedHighlighter, loadHighlighter } from "../src/markdown/highlight";
import { forgetRun, recalledRun, rememberRun, streamKey } from "../src/stream/session";
import { buildClarificationAnswer, buildHumanMessage, buildRunContext } from "../src/stream/settings";

describe("run payloads", () => {
  it("builds the human message with uploaded files in additional_kwargs.files", () => {
    expect(buildHumanMessage("read it", [{ filename: "a.txt", size: 3, path: "/mnt/user-data/uploads/a.txt", status: "uploaded" }])).toEqual({
      type: "human",
      content: [{ type: "text", text: "read it" }],
      additional_kwargs: { files: [{ filename: "a.txt", size: 3, path: "/mnt/user-data/uploads/a.txt", status: "uploaded" }] },
    });
  });

  it("builds the documented hidden human_input_response answer", () => {
    expect(buildClarificationAnswer({ requestId: "r1", source: "ask_clarification" }, { optionId: "option-2", value: "Rome" })).toEqual({
      type: "human",
      content: [{ type: "text", text: "Rome" }],
      additional_kwargs: {
        hide_from_ui: true,
        human_input_response: { version: 1, kind: "human_input_response", source: "ask_clarification", request_id: "r1", response_kind: "option", option_id: "option-2", value: "Rome" },
      },
    });
    const text = buildClarificationAnswer({ requestId: "r1", source: "ask_clarification" }, { value: "Lisbon" });
    expect((text.additional_kwargs as { human_input_response: { response_kind: string } }).human_input_response.response_kind).toBe("text");
  });

  it("maps toolbar settings to the run context", () => {
    expect(buildRunContext({ modelName: "m", thinking: true, planMode: true, reasoningEffort: "high" }, "T")).toEqual({
      model_name: "m",
      mode: "pro",
      thinking_enabled: true,
      is_plan_mode: true,
      subagent_enabled: false,
      reasoning_effort: "high",
      thread_id: "T",
    });
    expect(buildRunContext({ thinking: false, planMode: false, reasoningEffort: "low" }, "T").mode).toBe("flash");
  });
});

describe("session bookkeeping", () => {
  it("remembers and forgets the active run under lg:stream:{threadId}", () => {
    const m = new Map<string, string>();
    const storage = { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) };
    rememberRun(storage, "T1", "R1");
    expect(m.get("lg:stream:T1")).toBe("R1");
    expect(streamKey("T1")).toBe("lg:stream:T1");
    expect(recalledRun(storage, "T1")).toBe("R1");
    forgetRun(storage, "T1");
    expect(recalledRun(storage, "T1")).toBeUndefined();
  });
});

describe("artifacts", () => {
  it("encodes each path segment and adds ?download=true", () => {
    expect(artifactUrl("T 1", "/mnt/user-data/outputs/my report#1.md", true)).toBe("/api/threads/T%201/artifacts/mnt/user-data/outputs/my%20report%231.md?download=true");
  });
  it("chooses a preview kind by extension", () => {
    expect(["a.md", "b.png", "c.csv", "d.html", "e.py", "f.txt", "g.pdf"].map(previewKind)).toEqual(["markdown", "image", "csv", "html", "code", "text", "binary"]);
  });
  it("parses quoted CSV", () => {
    expect(parseCsv('name,note\n"Smith, J","said ""hi"""\r\nx,y\n')).toEqual([
      ["name", "note"],
      ["Smith, J", 'said "hi"'],
      ["x", "y"],
    ]);
  });
});

describe("markdown", () => {
  it("renders tables, highlighted code and math placeholders", async () => {
    const fenced = "```python\ndef f():\n    return 1\n```";
    // Before highlight.js has loaded (its own chunk), code is escaped plain text…
    if (!loadedHighlighter()) expect(markdownToHtml(fenced)).not.toContain("hljs-keyword");
    expect(hasCodeFence(fenced)).toBe(true);
    expect(hasCodeFence("no `fence` here")).toBe(false);
    await loadHighlighter();
    const html = markdownToHtml("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```\n\nInline $x^2$ math.");
    expect(html).toContain("<table>");
    expect(html).toContain('class="hljs-keyword"');
    expect(html).toContain("math-pending");
    expect(hasMath("costs $5 and $6")).toBe(false); // currency is not math
    expect(hasMath("no math here")).toBe(false);
  });
});
