import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { detectSignals, filterMessagesForMemory, filterTrivial, isTrivialTurn } from "../../src/memory";
import { formatCurrentUploads, ORIGINAL_USER_CONTENT_KEY } from "../../src/middlewares";

const call = (name: string) => aiMessage("", { tool_calls: [{ id: "c1", name, args: {} }] });

describe("memory message filtering", () => {
  it("keeps human turns and final AI answers, drops tool-calling AI messages and hidden framework messages", () => {
    const turns = filterMessagesForMemory([
      humanMessage("<memory>\nold\n</memory>", { id: "m__memory", additional_kwargs: { hide_from_ui: true } }),
      humanMessage("Find flights to Lisbon", { id: "h1" }),
      call("web_search"),
      { type: "tool", id: "t1", content: "results", tool_call_id: "c1", additional_kwargs: {}, response_metadata: {} } as never,
      aiMessage("Here are three flights.", { id: "a1" }),
    ]);
    expect(turns).toEqual([
      { role: "human", id: "h1", text: "Find flights to Lisbon" },
      // The tool result is not a turn; it stays with the answer written after it, for provenance.
      { role: "ai", id: "a1", text: "Here are three flights.", evidence: [{ kind: "tool", tool: "web_search", text: "results" }] },
    ]);
  });

  it("keeps a hidden but well-formed clarification answer", () => {
    const answer = humanMessage("Option B", {
      additional_kwargs: { hide_from_ui: true, human_input_response: { version: 1, kind: "human_input_response", source: "ask_clarification", request_id: "r1", value: "Option B", response_kind: "text" } },
    });
    expect(filterMessagesForMemory([answer]).map((t) => t.text)).toEqual(["Option B"]);
    const malformed = humanMessage("x", { additional_kwargs: { hide_from_ui: true, human_input_response: { version: 1 } } });
    expect(filterMessagesForMemory([malformed])).toEqual([]);
  });

  it("strips upload blocks; an upload-only turn is dropped with its reply", () => {
    const block = formatCurrentUploads([{ filename: "a.csv", size: 2048, path: "/mnt/user-data/uploads/a.csv", extension: "csv" }]);
    const turns = filterMessagesForMemory([
      humanMessage(`${block}\n\nSummarise the sales`),
      aiMessage("Sales grew 4%."),
      humanMessage(block),
      aiMessage("I see a file."),
      humanMessage(`${block}\nplease`, { additional_kwargs: { [ORIGINAL_USER_CONTENT_KEY]: "I prefer charts over tables" } }),
    ]);
    expect(turns.map((t) => t.text)).toEqual(["Summarise the sales", "Sales grew 4%.", "I prefer charts over tables"]);
  });

  it("drops trivial acknowledgements and their replies; all-trivial means nothing", () => {
    expect(isTrivialTurn("ok.")).toBe(true);
    expect(isTrivialTurn("好的！")).toBe(true);
    expect(isTrivialTurn("ok, now use Rust instead")).toBe(false);
    const turns = filterTrivial([
      { role: "human", text: "I use Rust at work" },
      { role: "ai", text: "Noted." },
      { role: "human", text: "thanks!" },
      { role: "ai", text: "You're welcome." },
    ]);
    expect(turns.map((t) => t.text)).toEqual(["I use Rust at work", "Noted."]);
    expect(filterTrivial([{ role: "human", text: "ok" }, { role: "ai", text: "👍" }])).toEqual([]);
  });

  it("detects signals in the human turns of the last six", () => {
    const s = detectSignals([
      { role: "human", text: "That's wrong, I prefer tabs" },
      { role: "ai", text: "Sorry, tabs." },
      { role: "human", text: "I am a data engineer and my goal is to learn Go" },
    ]);
    expect([...s].sort()).toEqual(["correction", "goal", "identity", "preference"]);
    const old = [{ role: "human" as const, text: "That's wrong" }, ...Array.from({ length: 6 }, () => ({ role: "ai" as const, text: "x" }))];
    expect(detectSignals(old).size).toBe(0);
    expect([...detectSignals([{ role: "human", text: "Let's go with Postgres" }])]).toEqual(["decision"]);
  });
});
