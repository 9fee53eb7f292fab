import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../../src/errors";
import { aiMessage, contentText, humanMessage, toolMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createToolOutputBudgetMiddleware, truncateHeadTail } from "../../src/middlewares/tool-output-budget";
import { buildToolOutputSynopsis } from "../../src/middlewares/tool-output-budget-synopsis";
import { createAgent } from "../../src/runtime";
import { Command, lastValue } from "../../src/state";
import { baseStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { captureModel, modelRequest, toolRequest } from "./_fixtures-guards";

const dirs: string[] = [];
function outputsDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "tob-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function lines(n: number, width = 60): string {
  return Array.from({ length: n }, (_, i) => `line ${String(i).padStart(5, "0")} ${"x".repeat(width)}`).join("\n");
}

async function budget(name: string, content: string, outputs: string | null, options = {}) {
  const mw = createToolOutputBudgetMiddleware(options);
  const state = outputs ? { thread_data: { workspace_path: "/w", uploads_path: "/u", outputs_path: outputs } } : {};
  return (await mw.wrapToolCall!(toolRequest({ name, id: "call-9" }, state), async () =>
    toolMessage(content, { tool_call_id: "call-9", name }),
  )) as ToolMessage;
}

describe("ToolOutputBudgetMiddleware", () => {
  it("validates options and names the bad key", () => {
    expect(() => createToolOutputBudgetMiddleware({ externalize_min_chars: -1 })).toThrow(/externalize_min_chars/);
    expect(() => createToolOutputBudgetMiddleware({ storage_subdir: "../escape" })).toThrow(ConfigError);
    expect(() => createToolOutputBudgetMiddleware({ storage_subdir: "/abs" })).toThrow(/storage_subdir/);
    expect(createToolOutputBudgetMiddleware().name).toBe("ToolOutputBudgetMiddleware");
  });

  it("leaves outputs at or under 12000 chars alone", async () => {
    const text = "a".repeat(12000);
    const out = await budget("bash", text, outputsDir());
    expect(out.content).toBe(text);
  });

  it("externalizes an output over 12000 chars to {outputs}/.tool-results with a typed synopsis", async () => {
    const outputs = outputsDir();
    const text = lines(300); // ~20k chars
    const out = await budget("grep", text, outputs);
    const preview = contentText(out.content);
    const files = readdirSync(path.join(outputs, ".tool-results"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^grep-[0-9a-f]{12}\.txt$/);
    expect(readFileSync(path.join(outputs, ".tool-results", files[0]), "utf8")).toBe(text);
    const vpath = `/mnt/user-data/outputs/.tool-results/${files[0]}`;
    expect(preview.split("\n")[0]).toBe(`[Full grep output saved to ${vpath} (${text.length} chars, ~${Math.floor(text.length / 4)} tokens).]`);
    expect(preview).toContain("[Preview kind: text.");
    expect(preview).toContain(`- Use read_file on ${vpath} with start_line and end_line to inspect the raw output.`);
    expect(preview).toContain("Raw sample (head + tail");
    expect(preview).toContain("line 00000");
    expect(preview).toContain("line 00299");
    expect(preview).not.toContain("line 00150");
    expect(preview.length).toBeLessThan(4000);
    expect(out.tool_call_id).toBe("call-9");
  });

  it("uses .log for bash and sanitizes tool names used as file names", async () => {
    const outputs = outputsDir();
    await budget("bash", lines(300), outputs);
    await budget("../../etc/passwd", lines(300), outputs);
    const files = readdirSync(path.join(outputs, ".tool-results")).sort();
    expect(files.some((f) => /^bash-[0-9a-f]{12}\.log$/.test(f))).toBe(true);
    expect(files.some((f) => /^passwd-[0-9a-f]{12}\.txt$/.test(f))).toBe(true);
    expect(readdirSync(outputs)).toEqual([".tool-results"]);
  });

  it("truncates to head 8000 + tail 3000 without thread_data, only above 30000 chars", async () => {
    const mid = "m".repeat(20000);
    expect((await budget("bash", mid, null)).content).toBe(mid);
    const text = lines(600); // ~40k
    const out = contentText((await budget("bash", text, null)).content);
    expect(out.length).toBeLessThanOrEqual(30000);
    expect(out).toMatch(/\[\.\.\. \d+ chars omitted from bash output\. Persistent storage unavailable\./);
    const [head, tail] = out.split(/\n\n\[\.\.\..*\]\n\n/);
    expect(head.length).toBeLessThanOrEqual(8000);
    expect(head.length).toBeGreaterThan(7000);
    expect(tail.length).toBeLessThanOrEqual(3000);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(head.endsWith("\n")).toBe(true); // snapped to a line boundary
  });

  it("falls back to truncation when the outputs directory cannot be written", async () => {
    const file = path.join(outputsDir(), "not-a-dir");
    writeFileSync(file, "x");
    const out = contentText((await budget("bash", lines(600), file)).content);
    expect(out).toContain("Persistent storage unavailable");
  });

  it("never touches exempt tools and honours tool_overrides", async () => {
    const outputs = outputsDir();
    const huge = lines(800);
    expect((await budget("read_file", huge, outputs)).content).toBe(huge);
    expect((await budget("read_file_tool", huge, null)).content).toBe(huge);
    const small = "s".repeat(600);
    const out = await budget("web_search", small, outputs, { tool_overrides: { web_search: 500 } });
    expect(contentText(out.content)).toContain("[Full web_search output saved to /mnt/user-data/outputs/.tool-results/web_search-");
    expect((await budget("other", small, outputs, { tool_overrides: { web_search: 500 } })).content).toBe(small);
  });

  it("does nothing when disabled, and leaves multimodal content alone", async () => {
    const huge = lines(800);
    expect((await budget("bash", huge, null, { enabled: false })).content).toBe(huge);
    const mw = createToolOutputBudgetMiddleware();
    const blocks = [{ type: "image_url", image_url: "u" }, { type: "text", text: huge }];
    const out = (await mw.wrapToolCall!(toolRequest({ name: "bash" }), async () => toolMessage(blocks, { tool_call_id: "c", name: "bash" }))) as ToolMessage;
    expect(out.content).toBe(blocks);
  });

  it("budgets tool messages inside a Command", async () => {
    const mw = createToolOutputBudgetMiddleware();
    const cmd = new Command({ update: { messages: [toolMessage(lines(600), { tool_call_id: "c", name: "bash" })] } });
    const out = (await mw.wrapToolCall!(toolRequest({ name: "bash" }), async () => cmd)) as Command;
    expect(contentText((out.update.messages as ToolMessage[])[0].content)).toContain("Persistent storage unavailable");
  });

  it("fallback-truncates oversized historical tool messages on the request copy only", async () => {
    const mw = createToolOutputBudgetMiddleware();
    const big = toolMessage(lines(600), { tool_call_id: "c1" });
    const exempt = toolMessage(lines(600), { tool_call_id: "c2" });
    const messages = [
      humanMessage("q"),
      aiMessage("", { tool_calls: [{ id: "c1", name: "bash", args: {} }, { id: "c2", name: "read_file", args: {} }] }),
      big,
      exempt,
    ];
    const { seen, handler } = captureModel();
    await mw.wrapModelCall!(modelRequest(messages), handler);
    expect(contentText(seen[0].messages[2].content)).toContain("chars omitted from bash output");
    expect(seen[0].messages[3]).toBe(exempt); // name resolved from the AI tool call → exempt
    expect(messages[2]).toBe(big);
    expect(big.content).toBe(lines(600));
    const small = [humanMessage("q")];
    const c2 = captureModel();
    const req = modelRequest(small);
    await mw.wrapModelCall!(req, c2.handler);
    expect(c2.seen[0]).toBe(req);
  });

  it("budgets historical block-content and override-sized tool messages; short plain ones pass the request through", async () => {
    const blocks = toolMessage([{ type: "text", text: lines(300) }, { type: "text", text: lines(300) }] as never, { tool_call_id: "c1", name: "bash" });
    const history = [humanMessage("q"), aiMessage("", { tool_calls: [{ id: "c1", name: "bash", args: {} }] }), blocks];
    const { seen, handler } = captureModel();
    await createToolOutputBudgetMiddleware().wrapModelCall!(modelRequest(history), handler);
    expect(contentText(seen[0].messages[2].content)).toContain("chars omitted from bash output");
    // With a fallback limit under the default trigger, a result between the two is truncated too.
    const mid = toolMessage(lines(100), { tool_call_id: "c1", name: "bash" });
    const lowered = captureModel();
    await createToolOutputBudgetMiddleware({ fallback_max_chars: 2000, fallback_head_chars: 500, fallback_tail_chars: 200 }).wrapModelCall!(
      modelRequest([humanMessage("q"), aiMessage("", { tool_calls: [{ id: "c1", name: "bash", args: {} }] }), mid]),
      lowered.handler,
    );
    expect(contentText(lowered.seen[0].messages[2].content).length).toBeLessThanOrEqual(2000);
    // Nothing can be over budget: the same request object goes on.
    const short = [humanMessage("q"), aiMessage("", { tool_calls: [{ id: "c1", name: "bash", args: {} }] }), toolMessage("ok", { tool_call_id: "c1", name: "bash" })];
    const untouched = captureModel();
    const req = modelRequest(short);
    await createToolOutputBudgetMiddleware().wrapModelCall!(req, untouched.handler);
    expect(untouched.seen[0]).toBe(req);
  });

  it("synopsis detects json, csv, yaml, code and binary", () => {
    const json = JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => ({ id: i, name: `n${i}` })), total: 50 });
    const j = buildToolOutputSynopsis(json);
    expect(j.kind).toBe("json");
    expect(j.summary).toContain("Top-level keys: items, total");
    expect(j.structure).toContain("$.items: array length 50; first item object");
    const csv = ["id,name,score", ...Array.from({ length: 20 }, (_, i) => `${i},n${i},${i * 2}`)].join("\n");
    expect(buildToolOutputSynopsis(csv)).toMatchObject({ kind: "csv", summary: ["CSV table with 20 data rows and 3 columns."] });
    expect(buildToolOutputSynopsis("name: app\nversion: 3\nsettings:\n  debug: true\nports:\n  - 80\n").kind).toBe("yaml");
    expect(buildToolOutputSynopsis("import os\n\ndef main():\n    pass\n").kind).toBe("code");
    expect(buildToolOutputSynopsis("\x00\x01\x02binary").title).toBe("Binary-like output");
    expect(buildToolOutputSynopsis("").title).toBe("Empty output");
  });

  it("truncateHeadTail never exceeds max_chars", () => {
    const t = "z".repeat(50000);
    expect(truncateHeadTail(t, "bash", 30000, 8000, 3000).length).toBeLessThanOrEqual(30000);
    expect(truncateHeadTail(t, "bash", 50, 8000, 3000)).toBe("z".repeat(50));
  });

  it("in a full agent run externalizes a big bash result and the model sees the synopsis", async () => {
    const outputs = outputsDir();
    const bash = tool({ name: "bash", description: "run", schema: z.object({ command: z.string() }), execute: () => lines(400) });
    const model = new ScriptedModel([{ toolCalls: [{ name: "bash", args: { command: "cat big.log" } }] }, "done"]);
    const agent = createAgent({
      model,
      tools: [bash],
      stateSchema: { ...baseStateSchema, thread_data: lastValue() },
      middleware: [createToolOutputBudgetMiddleware()],
    });
    const r = await agent.invoke(
      { messages: [humanMessage("go")], thread_data: { workspace_path: "/w", uploads_path: "/u", outputs_path: outputs } },
      { threadId: "tob-1" },
    );
    const seen = contentText(model.requests[1].messages.find((m) => m.type === "tool")!.content);
    expect(seen).toMatch(/^\[Full bash output saved to \/mnt\/user-data\/outputs\/\.tool-results\/bash-[0-9a-f]{12}\.log/);
    const stored = r.state.messages.find((m) => m.type === "tool")!;
    expect(contentText(stored.content)).toBe(seen);
    expect(readdirSync(path.join(outputs, ".tool-results"))).toHaveLength(1);
  });
});
