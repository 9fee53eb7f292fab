import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { aiMessage, humanMessage, systemMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { createTitleMiddleware } from "../../src/middlewares/title";
import { leadRuntime, leadState } from "./_fixtures-lead";

const reminder = systemMessage("<system-reminder>x</system-reminder>", { additional_kwargs: { dynamic_context_reminder: true } });

describe("TitleMiddleware", () => {
  it("validates options", () => {
    expect(() => createTitleMiddleware({ max_chars: 5 })).toThrow(ConfigError);
    expect(() => createTitleMiddleware({ max_words: 21 })).toThrow(/max_words/);
  });

  it("fires only with no title, exactly one user message and ≥1 AI message", async () => {
    const mw = createTitleMiddleware();
    const rt = leadRuntime();
    expect(await mw.afterModel!(leadState([humanMessage("hi")]), rt)).toBeUndefined();
    expect(await mw.afterModel!(leadState([humanMessage("hi"), aiMessage("yo")], { title: "T" }), rt)).toBeUndefined();
    expect(await mw.afterModel!(leadState([humanMessage("a"), aiMessage("b"), humanMessage("c"), aiMessage("d")]), rt)).toBeUndefined();
    expect(await createTitleMiddleware({ enabled: false }).afterModel!(leadState([humanMessage("hi"), aiMessage("yo")]), rt)).toBeUndefined();
    expect(await mw.afterModel!(leadState([reminder, humanMessage("Plan a trip"), aiMessage("ok")]), rt)).toEqual({ title: "Plan a trip" });
  });

  it("titles a message that carries an upload block by the user's own words, never by the injected block", async () => {
    const mw = createTitleMiddleware();
    const withUpload = humanMessage("<current_uploads>\nThe following files were uploaded with this message:\n- a.csv\n</current_uploads>\n\nSummarise the sales data", {
      additional_kwargs: { original_user_content: "Summarise the sales data", files: [{ filename: "a.csv" }] },
    });
    expect(await mw.afterModel!(leadState([withUpload, aiMessage("ok")]), leadRuntime())).toEqual({ title: "Summarise the sales data" });
    const model = new ScriptedModel(["Sales summary"]);
    const viaModel = createTitleMiddleware({ model_name: "fast", model });
    await viaModel.afterModel!(leadState([withUpload, aiMessage("ok")]), leadRuntime());
    const prompt = String(model.requests[0].messages[0].content);
    expect(prompt).toContain("Summarise the sales data");
    expect(prompt).not.toContain("current_uploads");
  });

  it("local fallback truncates to min(max_chars,50) with ... or says New Conversation", async () => {
    const mw = createTitleMiddleware();
    const long = "word ".repeat(30);
    expect(await mw.afterModel!(leadState([humanMessage(long), aiMessage("x")]), leadRuntime())).toEqual({ title: `${long.slice(0, 50).trimEnd()}...` });
    expect(await mw.afterModel!(leadState([humanMessage(""), aiMessage("x")]), leadRuntime())).toEqual({ title: "New Conversation" });
    const small = createTitleMiddleware({ max_chars: 20 });
    expect(await small.afterModel!(leadState([humanMessage("abcdefghijklmnopqrstuvwxyz"), aiMessage("x")]), leadRuntime())).toEqual({ title: "abcdefghijklmnopq..." });
  });

  it("with model_name asks the model (prompt_template, 500-char cut), strips <think> and quotes", async () => {
    const model = new ScriptedModel(['<think>hmm</think> "Trip to Kyoto in Spring, a very long title that goes on"']);
    const mw = createTitleMiddleware({ model_name: "fast", model, max_chars: 30 });
    const res = await mw.afterModel!(leadState([humanMessage("u".repeat(600)), aiMessage("<think>x</think>answer")]), leadRuntime());
    expect(res).toEqual({ title: "Trip to Kyoto in Spring, a ver" });
    const prompt = String(model.requests[0].messages[0].content);
    expect(prompt).toBe(`Generate a concise title (max 6 words) for this conversation.\nUser: ${"u".repeat(500)}\nAssistant: answer\n\nReturn ONLY the title, no quotes, no explanation.`);
  });

  it("falls back locally when the title model fails or answers empty", async () => {
    const failing = new ScriptedModel([{ error: { kind: "server" } }]);
    const mw = createTitleMiddleware({ model_name: "x", model: failing });
    expect(await mw.afterModel!(leadState([humanMessage("Hello"), aiMessage("x")]), leadRuntime())).toEqual({ title: "Hello" });
    const empty = createTitleMiddleware({ model_name: "x", model: new ScriptedModel(['""']) });
    expect(await empty.afterModel!(leadState([humanMessage("Hello"), aiMessage("x")]), leadRuntime())).toEqual({ title: "Hello" });
  });

  it("full run: title set after the first exchange", async () => {
    const agent = createAgent({ model: new ScriptedModel(["hi!"]), stateSchema: threadStateSchema, middleware: [createTitleMiddleware()] });
    const res = await agent.invoke({ messages: [humanMessage("Write a poem about rain")] }, { threadId: "ti1" });
    expect(res.state.title).toBe("Write a poem about rain");
  });
});
