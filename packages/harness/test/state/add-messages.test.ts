import { describe, expect, it } from "vitest";
import { addMessages } from "../../src/state";
import { aiMessage, humanMessage, removeAllMessages, removeMessage } from "../../src/messages";
import { InvalidUpdateError } from "../../src/errors";

describe("addMessages (add_messages semantics)", () => {
  it("appends new messages and generates missing ids", () => {
    const a = humanMessage("a", { id: "1" });
    const out = addMessages([a], [{ type: "ai", content: "b" }]);
    expect(out.map((m) => m.content)).toEqual(["a", "b"]);
    expect(out[1].id).toBeTruthy();
  });

  it("replaces a message with the same id in place", () => {
    const out = addMessages([humanMessage("a", { id: "1" }), aiMessage("b", { id: "2" })], [humanMessage("A", { id: "1" })]);
    expect(out.map((m) => m.content)).toEqual(["A", "b"]);
  });

  it("removes by id and errors on unknown ids", () => {
    const base = [humanMessage("a", { id: "1" }), aiMessage("b", { id: "2" })];
    expect(addMessages(base, [removeMessage("1")]).map((m) => m.id)).toEqual(["2"]);
    expect(() => addMessages(base, [removeMessage("nope")])).toThrow(InvalidUpdateError);
    expect(() => addMessages(base, [removeMessage("1"), removeMessage("1")])).toThrow(/doesn't exist/);
  });

  it("remove-all marker clears everything written before it", () => {
    const base = [humanMessage("a", { id: "1" }), aiMessage("b", { id: "2" })];
    const out = addMessages(base, [humanMessage("x", { id: "x" }), removeAllMessages(), humanMessage("kept", { id: "3" })]);
    expect(out.map((m) => m.id)).toEqual(["3"]);
  });

  it("does not mutate the current list", () => {
    const base = [humanMessage("a", { id: "1" })];
    addMessages(base, [humanMessage("b", { id: "2" })]);
    expect(base).toHaveLength(1);
  });

  it("re-adding a removed id appends it at the end", () => {
    const base = [humanMessage("a", { id: "1" }), aiMessage("b", { id: "2" })];
    const out = addMessages(base, [removeMessage("1"), humanMessage("a2", { id: "1" })]);
    expect(out.map((m) => `${m.id}:${m.content}`)).toEqual(["2:b", "1:a2"]);
  });
});
