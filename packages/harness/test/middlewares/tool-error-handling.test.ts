import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunCancelledError, ToolError } from "../../src/errors";
import { humanMessage, toolMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { TOOL_META_KEY, analyseToolResult } from "../../src/middlewares/tool-error-handling-meta";
import { createToolErrorHandlingMiddleware } from "../../src/middlewares/tool-error-handling";
import { createAgent, GraphInterrupt } from "../../src/runtime";
import { Command } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { toolRequest } from "./_fixtures-guards";

const mw = createToolErrorHandlingMiddleware();
const wrap = (name: string, handler: () => Promise<ToolMessage | Command>) => mw.wrapToolCall!(toolRequest({ name, id: "c1" }), handler);

describe("ToolErrorHandlingMiddleware", () => {
  it("turns an exception into an error tool message with DeerFlow's text and exception meta", async () => {
    const out = (await wrap("web_fetch", async () => {
      throw new ToolError("connection refused by host");
    })) as ToolMessage;
    expect(out).toMatchObject({ type: "tool", status: "error", name: "web_fetch", tool_call_id: "c1" });
    expect(out.content).toBe(
      "Error: Tool 'web_fetch' failed with ToolError: connection refused by host. Continue with available context, or choose an alternative tool.",
    );
    expect(out.additional_kwargs[TOOL_META_KEY]).toEqual({
      status: "error",
      error_type: "transient",
      recoverable_by_model: false,
      recommended_next_action: "try_alternative",
      source: "exception",
    });
  });

  it("caps the detail at 500 chars and names the error class", async () => {
    const out = (await wrap("bash", async () => {
      throw new TypeError("x".repeat(900));
    })) as ToolMessage;
    const detail = (out.content as string).match(/failed with TypeError: (x+\.\.\.)\./)![1];
    expect(detail).toHaveLength(500);
    const blank = (await wrap("bash", async () => {
      throw new RangeError("");
    })) as ToolMessage;
    expect(blank.content).toContain("failed with RangeError: RangeError.");
  });

  it("re-throws interrupts and cancellations", async () => {
    await expect(wrap("ask", async () => { throw new GraphInterrupt("q"); })).rejects.toThrow(GraphInterrupt);
    await expect(wrap("bash", async () => { throw new RunCancelledError(); })).rejects.toThrow(RunCancelledError);
    const abort = new Error("The operation was aborted");
    abort.name = "AbortError";
    await expect(wrap("bash", async () => { throw abort; })).rejects.toBe(abort);
  });

  it("stamps successful, partial and error-returning results; keeps an existing stamp; leaves Commands", async () => {
    const ok = (await wrap("bash", async () => toolMessage("all good", { tool_call_id: "c1" }))) as ToolMessage;
    expect(ok.additional_kwargs[TOOL_META_KEY]).toEqual({ status: "success", error_type: null, recoverable_by_model: true, recommended_next_action: "continue", source: "content_analysis" });
    const partial = (await wrap("web_search", async () => toolMessage("No results found for query", { tool_call_id: "c1" }))) as ToolMessage;
    expect(partial.additional_kwargs[TOOL_META_KEY]).toMatchObject({ status: "partial_success", error_type: null, recommended_next_action: "rewrite_query" });
    const returned = (await wrap("read_file", async () => toolMessage("Error: File not found: /x", { tool_call_id: "c1", status: "error" }))) as ToolMessage;
    expect(returned.additional_kwargs[TOOL_META_KEY]).toMatchObject({ status: "error", error_type: "not_found", recoverable_by_model: true, recommended_next_action: "rewrite_query", source: "tool_return" });
    const stamped = toolMessage("x", { tool_call_id: "c1", additional_kwargs: { [TOOL_META_KEY]: { status: "success", source: "progress_middleware" } } });
    expect(await wrap("bash", async () => stamped)).toBe(stamped);
    const cmd = new Command({ update: {} });
    expect(await wrap("bash", async () => cmd)).toBe(cmd);
  });

  it("classifies JSON error payloads and ignores 'no error' sentinels", () => {
    expect(analyseToolResult(toolMessage('{"error": "rate limit exceeded"}', { tool_call_id: "c" }))).toMatchObject({ status: "error", error_type: "rate_limited" });
    expect(analyseToolResult(toolMessage('{"error": "none", "results": []}', { tool_call_id: "c" }))).toMatchObject({ status: "success" });
    expect(analyseToolResult(toolMessage("Showing partial results", { tool_call_id: "c" }))).toMatchObject({ status: "partial_success", recommended_next_action: "rewrite_query" });
  });

  it("reads a JSON object behind leading JSON whitespace; arrays, JSON strings and broken JSON are plain text", () => {
    const analyse = (content: string, status?: "error") => analyseToolResult(toolMessage(content, { tool_call_id: "c", ...(status ? { status } : {}) }));
    expect(analyse(' \n\t{"error": "rate limit exceeded"}')).toMatchObject({ status: "error", error_type: "rate_limited", source: "tool_return" });
    expect(analyse('{"error": {"code": 404}}')).toMatchObject({ status: "error", error_type: "not_found" });
    expect(analyse('[{"error": "rate limit"}]')).toMatchObject({ status: "success", source: "content_analysis" });
    expect(analyse('"rate limit"')).toMatchObject({ status: "success" });
    expect(analyse("{not json, truncated")).toMatchObject({ status: "partial_success" });
    // An error result: a JSON object without `error` is unknown; anything else is classified by its text.
    expect(analyse(' {"detail": "permission denied"}', "error")).toMatchObject({ status: "error", error_type: "unknown", recommended_next_action: "try_alternative" });
    expect(analyse("[1, 2] permission denied", "error")).toMatchObject({ status: "error", error_type: "permission" });
    // A non-breaking space is not JSON whitespace: the text is not JSON.
    expect(analyse('\u00a0{"error": "rate limit"}', "error")).toMatchObject({ status: "error", error_type: "rate_limited" });
    expect(analyse('\u00a0{"error": "none"}')).toMatchObject({ status: "success" });
    // Status codes match as whole words only.
    expect(analyse("Error: upstream 4040 bytes")).toMatchObject({ error_type: "unknown" });
    expect(analyse("Error: upstream answered 404")).toMatchObject({ error_type: "not_found" });
  });

  it("full agent run: a throwing tool becomes a recoverable error and the run continues", async () => {
    const flaky = tool({ name: "flaky", description: "fails", schema: z.object({}), execute: () => { throw new Error("disk on fire"); } });
    const model = new ScriptedModel([{ toolCalls: [{ name: "flaky", args: {} }] }, "recovered"]);
    const agent = createAgent({ model, tools: [flaky], middleware: [createToolErrorHandlingMiddleware()] });
    const r = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "teh-1" });
    expect(r.status).toBe("success");
    const t = model.requests[1].messages.find((m) => m.type === "tool") as ToolMessage;
    expect(t.content).toBe("Error: Tool 'flaky' failed with Error: disk on fire. Continue with available context, or choose an alternative tool.");
    expect(t.additional_kwargs[TOOL_META_KEY]).toMatchObject({ source: "exception", status: "error" });
  });
});

describe("ToolErrorHandlingMiddleware: task failures", () => {
  it("stamps the sub-agent status contract on a task call that threw", async () => {
    const mw = createToolErrorHandlingMiddleware();
    const out = (await mw.wrapToolCall!(toolRequest({ name: "task" }), async () => {
      throw new Error("executor exploded");
    })) as ToolMessage;
    expect(out.status).toBe("error");
    expect(out.additional_kwargs).toMatchObject({ subagent_status: "failed", subagent_error: "Error: executor exploded" });
  });
});
