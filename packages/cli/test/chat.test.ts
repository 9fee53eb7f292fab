import { describe, expect, it } from "vitest";
import { cleanEnv, runCli, SCRIPTED_AGENT, tempDir } from "./helpers";

describe("deerflow chat (stdin-driven)", { timeout: 60_000 }, () => {
  it("handles two turns and answers a clarification inline with a hidden human_input_response", async () => {
    const dir = tempDir();
    const env = cleanEnv({
      DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT,
      DEERFLOW_TEST_SCRIPT: JSON.stringify([
        "Hello human, how can I help?",
        { toolCalls: [{ name: "ask_clarification", args: { question: "Which format do you want?", clarification_type: "approach_choice", options: ["PDF", "Markdown"] } }] },
        "$ECHO_HUMAN_INPUT",
      ]),
    });
    const r = await runCli(["chat"], { cwd: dir, env, input: "hi there\nmake me a document\n2\n/thread\n/exit\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const threadId = /thread (\S+) ·/.exec(r.stdout)![1];
    expect(r.stdout).toContain("Hello human, how can I help?");
    expect(r.stdout).toContain("? ");
    expect(r.stdout).toContain("Which format do you want?");
    expect(r.stdout).toMatch(/1\. PDF\n\s+2\. Markdown/);
    expect(r.stdout).toContain("answer › ");
    const got = /Got answer: (\{.*\})/.exec(r.stdout);
    expect(got).not.toBeNull();
    expect(JSON.parse(got![1])).toMatchObject({
      version: 1,
      kind: "human_input_response",
      source: "ask_clarification",
      response_kind: "option",
      option_id: "option-2",
      value: "Markdown",
      request_id: expect.any(String),
    });
    // /thread prints the id; the chat ends cleanly on /exit
    expect(r.stdout.split("\n").some((l) => l.trim() === threadId)).toBe(true);
  });

  it("ends cleanly at end of input and keeps going after a failed turn", async () => {
    const dir = tempDir();
    const env = cleanEnv({ DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT, DEERFLOW_TEST_SCRIPT: JSON.stringify([{ error: { kind: "server", message: "upstream exploded" } }, "Recovered fine."]) });
    const r = await runCli(["chat"], { cwd: dir, env, input: "first\nsecond\n" });
    expect(r.stderr).toMatch(/Error: .*upstream exploded/);
    expect(r.stdout).toContain("Recovered fine.");
    expect(r.code).toBe(1);
  });
});
